#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/db.hpp"

namespace ctxfold {

/// The one-row state of a table of derived data (docs/model.md "The append-only ledger": derived
/// data may be rebuilt): how far it reaches (`through_seq`: every node with seq <= it is in) and
/// the version of what it holds (a text fold's Unicode version, a pack format). `state_table`
/// has the columns (id = 1, through_seq, `version_column`); `data_table` is what a rebuild clears.
struct DerivedMark {
  const char* state_table;
  const char* version_column;
  const char* data_table;
};

/// The stored mark: {through_seq, version}, nullopt when the state row does not exist.
std::optional<std::pair<std::int64_t, std::string>> read_derived_mark(Db& db, const DerivedMark& m);

/// Starts an update inside the caller's write transaction: the stored through_seq, or 0 after
/// clearing `data_table` when `rebuild` is set or the stored version is not `version` (then
/// *rebuilt is set); the state row is written with that seq and `version`. Returns the seq.
std::int64_t start_derived_mark(Db& db, const DerivedMark& m, std::string_view version, bool rebuild, bool* rebuilt);

/// Records, inside the caller's write transaction, that the data now reaches `through`.
void advance_derived_mark(Db& db, const DerivedMark& m, std::int64_t through);

}  // namespace ctxfold
