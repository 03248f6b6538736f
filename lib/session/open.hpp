#pragma once
#include <string>

#include "store/store.hpp"

namespace ctxfold {

/// Opens the session database at `path` with ctxfold's token estimator filling each appended
/// node's `tokens` column (tokens/estimate.hpp estimate_node_tokens; docs/architecture.md "The
/// store knows no strategy"). Errors: those of Store::open.
Store open_store(const std::string& path, Store::Mode mode);

/// Runs SQLite's `PRAGMA quick_check(1)` over the whole database and throws Error(bad_input,
/// "db.corrupt") with its first finding when the file is damaged: the bulk write commands (import,
/// index) call it before writing (docs/commands.md "Damaged databases"). Cost: reads every page,
/// O(file size): 0.2-0.3 s of CPU for a 290 MB database of 10^5 nodes.
void check_integrity(Store& store);

}  // namespace ctxfold
