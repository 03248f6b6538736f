#include "session/open.hpp"

#include <fmt/format.h>

#include "tokens/estimate.hpp"
#include "util/error.hpp"

namespace ctxfold {

Store open_store(const std::string& path, Store::Mode mode) {
  return Store::open(path, mode, &estimate_node_tokens);
}

void check_integrity(Store& store) {
  auto st = store.db().prepare("PRAGMA quick_check(1)");
  const std::string verdict = st.step() ? st.text(0) : std::string("no answer");
  if (verdict != "ok")
    throw Error(Exit::bad_input, "db.corrupt", fmt::format("'{}' is damaged: {}", store.path(), verdict),
                "write commands refuse a damaged database; `ctxfold verify-invariants` reports what is wrong; "
                "restore the database from a backup");
}

}  // namespace ctxfold
