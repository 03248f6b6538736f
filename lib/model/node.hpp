#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace ctxfold {

/// Node kinds (docs/model.md "Nodes"). `message` is a conversation record a model reads; `summary`,
/// `archive` and `notes` are view nodes standing in for other nodes; `event` is a transparent
/// chain record kept for the ledger but never model input (Claude Code progress/system lines,
/// Gemini info/error notices, compaction boundaries).
namespace kind {
inline constexpr const char* kMessage = "message";
inline constexpr const char* kSummary = "summary";
inline constexpr const char* kArchive = "archive";
inline constexpr const char* kNotes = "notes";
inline constexpr const char* kEvent = "event";

/// Whether a kind names a view node (summary, archive, notes).
inline bool is_view(std::string_view k) { return k == kSummary || k == kArchive || k == kNotes; }
}  // namespace kind

/// Message roles. A `tool` node carries only tool_result blocks.
namespace role {
inline constexpr const char* kSystem = "system";
inline constexpr const char* kUser = "user";
inline constexpr const char* kAssistant = "assistant";
inline constexpr const char* kTool = "tool";
}  // namespace role

/// One durable record of the ledger. Nodes are append-only: once stored nothing changes.
///
/// `content` is a JSON array of provider-neutral blocks:
///   {"type":"text","text":S}
///   {"type":"tool_use","id":S,"name":S,"input":ANY}
///   {"type":"tool_result","tool_use_id":S,"content":S|[blocks],"is_error":BOOL}
///   {"type":"image","media_type":S,"data":BASE64?,"ref":S?,"width":N?,"height":N?}
///   {"type":"thinking","thinking":S,"signature":S?}
///   {"type":"opaque","provider":S,"data":ANY}   (encrypted reasoning, provider compaction blobs)
/// `metadata` is a JSON object. Known keys: "source" {format,file,line(s),...} where it came
/// from; "usage" provider-reported usage; "missing_predecessor" the parent id a source named but
/// never wrote (invariant 2 warning); "strategy" for view nodes. For view nodes `covers_ids` is
/// held separately (Node::covers_ids) and stored in the covers table; it is the exact ordered
/// list of contiguous chain ids the node replaces, and `predecessor` is the predecessor of the
/// first covered node (its splice point).
struct Node {
  std::int64_t seq = 0;  ///< per-database append order; 0 until stored
  std::string id;
  std::string session;
  std::optional<std::string> predecessor;
  std::string kind = kind::kMessage;
  std::string role;  ///< empty for events
  Json content = Json::array();
  Json metadata = Json::object();
  std::vector<std::string> covers_ids;  ///< view nodes only
  std::int64_t tokens = 0;              ///< local estimate, filled by the store on append
  std::string digest;                   ///< filled by the store on append

  bool is_view() const { return kind == kind::kSummary || kind == kind::kArchive || kind == kind::kNotes; }
  /// True for nodes a model reads when they are on the rendered spine (messages; view nodes are
  /// substituted by the renderer).
  bool is_model_input() const { return kind == kind::kMessage; }
};

/// Schema tags of ctxfold JSONL records (`export` writes them, `import` reads them): a session
/// declaration, then its nodes in canonical form.
inline constexpr const char* kNodeSchema = "ctxfold.node/1";
inline constexpr const char* kSessionSchema = "ctxfold.session/1";

/// The canonical JSON form of a node, as printed by `show` and written by ctxfold JSONL export:
/// {"id","session","seq","predecessor","kind","role","content","metadata"} plus "covers_ids"
/// for view nodes. `with_seq=false` omits seq (used for the content digest).
Json node_to_json(const Node& n, bool with_seq = true);

/// Reads the canonical form (seq, digest and tokens are ignored). Throws Error(bad_input,
/// "input.node") naming the missing or mistyped field.
Node node_from_json(const Json& j);

/// SHA-256 over the canonical form without seq and without the derived metadata.covers key:
/// what invariant 1 recomputes.
std::string node_digest(const Node& n);

/// The stored metadata JSON: metadata without the derived "covers" key.
std::string metadata_json(const Node& n);

/// The canonical form as bytes, from content and metadata already serialized (equal to
/// dump_json(node_to_json(n, false)) with metadata as metadata_json(n)); node_digest hashes it.
std::string canonical_node(const Node& n, std::string_view content_json, std::string_view metadata_json);

/// Concatenated text of the node's text blocks (and tool_result text), for search and recaps.
std::string node_text(const Node& n);

/// Metadata keys of a node whose values (a string or an array of strings) are node ids of the
/// same session: what fork remaps and drops, and what invariant 9 resolves. "covers_ids" here is
/// a copy some strategies keep in metadata; the covers table is checked separately.
inline constexpr const char* kNodeIdListKeys[] = {"covers_ids", "children", "parents", "child_ids", "parent_ids"};

/// The id a node copied into fork session `fork_session` gets: "<fork_session>:<old id>"
/// (docs/strategies.md "What a fork copies").
inline std::string fork_node_id(const std::string& fork_session, const std::string& old_id) {
  return fork_session + ":" + old_id;
}

/// True for a node the rolling view reads as its summary kind: a summary whose metadata.strategy
/// is absent, null (an imported summary) or "rolling" — the rule the store's active-summary query
/// applies (docs/strategies.md "rolling").
bool is_rolling_summary(const Node& n);

/// True when the node is a user-role message that is not only tool results (a turn start; a view
/// node is not). Pure over the node: no metadata is read.
bool is_user_turn(const Node& n);

/// The tool_use ids a node calls and the tool_use ids it answers (tool_result.tool_use_id).
std::vector<std::string> tool_use_ids(const Node& n);
std::vector<std::string> tool_result_ids(const Node& n);

}  // namespace ctxfold
