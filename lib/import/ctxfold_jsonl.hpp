#pragma once
// ctxfold's own JSONL: one record per line, shared by `import --format ctxfold` and `append`.
#include <optional>
#include <string>

#include "model/node.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {


/// True for a session declaration {"schema":"ctxfold.session/1","id",...}.
bool is_ctxfold_session_record(const Json& j);

/// True for a node record: an object with "schema":"ctxfold.node/1", or without "schema" but
/// with at least one of "content", "role", "kind" (the canonical form of node_to_json).
bool is_ctxfold_node_record(const Json& j);

/// The session a declaration names: {"id", "kind"?, "parent_session"?, "parent_node"?,
/// "source"?, "format"?, "metadata"?}. Throws Error(bad_input,"input.session") without an id.
SessionInfo session_from_record(const Json& j);

/// One node record → Node (node_from_json: seq, tokens and digest are ignored). An empty
/// "session" becomes default_session. id and predecessor are left as given (empty id, absent
/// predecessor): callers decide the defaults (import: "<session>:<line>" and the previous node of
/// the session in the file; append: HEAD). predecessor_given tells whether the record had a
/// "predecessor" key at all (null counts as given: an explicit root).
/// Throws Error(bad_input,"input.node") naming a missing or mistyped field.
Node node_from_record(const Json& j, const std::string& default_session, bool* predecessor_given = nullptr);

}  // namespace ctxfold
