// I11 storage integrity: the engine's own checks (store/scan.hpp integrity_findings): SQLite's
// integrity_check (or quick_check) and foreign keys; a server's checksums, triggers and keys.
#include "invariants/checks.hpp"
#include "store/scan.hpp"

namespace ctxfold::verify_detail {

// ---------------------------------------------------------------- I11

void check_sqlite(Store& store, Check& c, bool quick) {
  for (const std::string& finding : integrity_findings(store.db(), quick)) add(c, "", {}, finding);
}

}  // namespace ctxfold::verify_detail
