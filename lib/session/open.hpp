#pragma once
#include <string>

#include "store/store.hpp"

namespace ctxfold {

/// Opens the session database at `path` with ctxfold's token estimator filling each appended
/// node's `tokens` column (tokens/estimate.hpp estimate_node_tokens; docs/architecture.md "The
/// store knows no strategy"). Errors: those of Store::open.
Store open_store(const std::string& path, Store::Mode mode);

}  // namespace ctxfold
