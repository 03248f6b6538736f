#include "session/open.hpp"

#include <fmt/format.h>

#include "tokens/estimate.hpp"
#include "util/error.hpp"

namespace ctxfold {

Store open_store(const std::string& path, Store::Mode mode) {
  return Store::open(path, mode, &estimate_node_tokens);
}

void check_integrity(Store& store) {
  const std::string verdict = store.db().quick_check();
  if (verdict != "ok")
    throw Error(Exit::bad_input, "db.corrupt", fmt::format("'{}' is damaged: {}", store.path(), verdict),
                "write commands refuse a damaged database; `ctxfold verify-invariants` reports what is wrong; "
                "restore the database from a backup");
}

}  // namespace ctxfold
