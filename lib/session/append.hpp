#pragma once
// The harness write path behind `ctxfold append` (docs/commands.md "Input"): nodes given as JSON
// on stdin.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/store.hpp"

namespace ctxfold {

/// One record of append input: the 1-based line it started on (the element index for a JSON
/// array) and its JSON text.
struct AppendRecord {
  std::int64_t line = 0;
  std::string text;
};

/// Splits append input: one JSON array of node objects, or JSON Lines (blank lines skipped).
/// Throws Error(bad_input,"input.malformed") when the input starts with '[' and does not parse.
std::vector<AppendRecord> split_append_records(std::string_view text);

/// A record that was refused, with the reason (file position "stdin:LINE" is the caller's).
struct AppendError {
  std::int64_t line = 0;
  std::string message;
};

struct AppendOutcome {
  std::vector<std::string> appended;  ///< ids written, in input order
  std::vector<std::string> skipped;   ///< ids already stored with the same digest
  std::vector<std::string> sessions;  ///< sessions that gained a node, sorted
  std::vector<AppendError> errors;    ///< refused records; the others are still appended
};

/// Appends each record as a node (node_from_json). A record without "session" goes to
/// default_session; without "predecessor" it extends that session's HEAD; without "id" it gets
/// new_id(). Unknown sessions are created (kind main, format "append"). HEAD moves with cause
/// "append" only when the node extends HEAD's chain; view nodes never move it (docs/model.md
/// "Chains, branches and HEAD").
/// A record is refused (AppendError, nothing written for it) when it is not valid JSON, not a
/// node, names no session and there is no default, names a predecessor that does not exist or
/// belongs to another session, has an unknown kind, is a view node whose covers_ids are empty or
/// name nodes that are not stored in its session (Store::coverage_problem), or reuses an id with
/// a different payload. Any other Error (Exit::environment: libnettle cannot be loaded for the
/// node digest, an I/O failure) is thrown, not refused: the caller's transaction then rolls back.
/// The caller holds the write transaction.
AppendOutcome append_records(Store& store, const std::vector<AppendRecord>& records,
                             const std::optional<std::string>& default_session,
                             const std::function<std::string()>& new_id);

}  // namespace ctxfold
