#pragma once
// export: a session back out of the database, in a form `import` reads
// back: ctxfold JSONL (every node, summaries and events included) or a provider messages document.
#include <functional>
#include <string>

#include "render/render.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Schema tag of export's closing summary record; `import --format ctxfold` skips it.
inline constexpr const char* kExportSchema = "ctxfold.export/1";

/// Counts of one exported session.
struct ExportCounts {
  std::string session;
  std::int64_t nodes = 0;  ///< node records written (messages, events and view nodes)
  std::int64_t views = 0;  ///< of which view nodes (summaries, folds)
};

/// Writes session `session` as ctxfold JSONL through `line` (one JSON value per call, no newline):
/// first the session declaration {"schema":"ctxfold.session/1","id","kind","parent_session",
/// "parent_node","source","format","metadata","head"}, then every node of the session in seq order
/// as {"schema":"ctxfold.node/1", node_to_json without seq}. Seq order puts each predecessor and
/// each covered node before the nodes that name them, so `import --format ctxfold` re-creates the
/// same ids, predecessors, covers_ids and HEAD. Source records kept verbatim at import (lines that
/// are not nodes) are not exported. Throws Error(bad_input,"session.unknown") for an unknown session.
ExportCounts export_ctxfold(Store& st, const std::string& session, const std::function<void(const Json&)>& line);

/// The raw history of HEAD's spine (strategy "raw": no summary substituted, no cap on rows) as the
/// provider's request body (render_request_body): {"messages":[...]} for openai (system first),
/// {"system"?, "messages":[...]} for anthropic. `import --format openai|anthropic` reads it back.
/// `warnings` (when given) receives the render's warnings (render/partial.hpp: a walk that
/// stopped at a predecessor cycle or a missing predecessor exported a partial history).
Json export_messages(Store& st, const std::string& session, RenderFormat format,
                     std::vector<std::string>* warnings = nullptr);

}  // namespace ctxfold
