#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "model/strategy_label.hpp"
#include "store/store.hpp"
#include "tokens/calibrate.hpp"

namespace ctxfold {

/// Header a render puts before the notes: a short pointer to the recall commands (docs/strategies.md "notes").
inline constexpr const char* kNotesHeader =
    "[ctxfold notes: working notes kept across compactions; `ctxfold grep` and `ctxfold expand` read the full history]";


enum class RenderFormat { ctxfold, openai, anthropic, gemini, text, responses };

/// Parses "ctxfold" | "openai" | "anthropic" | "gemini" | "responses" | "text"; throws
/// Error(usage) otherwise.
RenderFormat parse_render_format(const std::string& s);

struct RenderOptions {
  std::optional<std::string> head;  ///< render from this node instead of the session's HEAD
  /// "rolling" (the active rolling summary is substituted, then the lcm folds past it:
  /// docs/model.md "How a render uses a summary"), "lcm" (the lcm summary tree's top nodes on the
  /// spine, after the active rolling or imported summary unless an lcm fold overlaps its coverage:
  /// it is read as lcm's covered prefix and never summarized again) or "raw" (no summary: the spine
  /// as written, for forensics). Anything else: Error(usage,"render.strategy").
  std::string strategy = "rolling";
  std::int64_t as_of = kLatest;     ///< read the state at this append boundary
  /// Per-row cap on the text a row sends (cap_row); 0: no cap. The library default is no cap so
  /// compaction plans on whole rows; `ctxfold render` applies kDefaultMaxRowBytes.
  std::int64_t max_row_bytes = 0;
  /// strategy "snapcompact" (docs/strategies.md "snapcompact"): the model the request is for
  /// (share/models/catalog.json; unknown or empty: the catalog defaults), which sets frame geometry
  /// and budget; a model that reads no images renders as "rolling" (Rendered::fallback) and the
  /// archive stays stored.
  std::string model;
  /// snapcompact frame settings; absent fields come from the archive's metadata.snapcompact (what
  /// its compaction used), then the defaults.
  std::optional<std::int64_t> window;
  std::optional<int> archive_percent;
  std::optional<int> max_frames;
  /// false: frames are laid out and counted (dimensions, keys, budget) but not PNG-encoded: the
  /// image blocks carry no data. Compaction plans with it.
  bool encode_frames = true;
  /// Start with the session's notes (docs/strategies.md "notes": every later request starts with
  /// them), under kNotesHeader after the system run. Compaction plans without them (the strategies'
  /// triggers do not count the notes). Never with strategy raw.
  bool notes = true;
  /// `render --system FILE`: the system prompt's text, rendered first in place of whatever the
  /// session records (Rendered::system source "option").
  std::optional<std::string> system_text;
  /// Each item walked keeps only the metadata a render reads: "tool_use_result" and "raw" are
  /// dropped and "source" is cut to its "format" (docs/render.md "Memory": an imported Claude Code
  /// node's metadata holds its verbatim source records, about four times its content). The
  /// request, the figures and the JSON printed are the same; for callers that read no other
  /// metadata of Rendered::items (render, context, tokens, verify-invariants). false: items as stored.
  bool lean_metadata = false;
};

/// What a render knows of the request's system prompt (docs/render.md "The system prompt").
/// source: "transcript" (system-role messages lead HEAD's spine), "record" (a system_prompt event
/// node the importer stored from the client's own records; rendered first as a system message),
/// "node" (metadata.system_blocks / system_prompt on the newest rendered node that carries them:
/// an importer marks the nodes where the client's prompt changed), "session" (the same keys in the
/// session's metadata), "option" (RenderOptions::system_text) or "none" (known false: the render
/// holds no system prompt, and the request the client sent had one ctxfold never saw). The
/// synthetic system message of node, session and option is not in Rendered::reads.
/// The id of the synthetic system message RenderOptions::system_text renders (never stored, never
/// in Rendered::reads).
inline constexpr const char* kSystemOptionId = "(--system)";

struct SystemPromptInfo {
  bool known = false;
  std::string source = "none";
  std::optional<std::string> node;  ///< the event node (source "record") or the node carrying it ("node")
  std::int64_t chars = 0;           ///< bytes of its text
  std::int64_t tools = -1;          ///< tools the recorded request carried; -1 unknown
};

/// `render`'s default per-row cap: 100,000 bytes, about 25k tokens at ~4 bytes a token — the
/// size Claude Code's own Read tool allows one result (25,000 tokens), and an eighth of a
/// 200k-token window, so one huge tool output (a 5 MB log) cannot crowd out the conversation.
inline constexpr std::int64_t kDefaultMaxRowBytes = 100000;

/// A row render_context cut (RenderOptions::max_row_bytes).
struct TruncatedRow {
  std::string id;
  std::int64_t original_bytes = 0;  ///< text bytes the row holds
  std::int64_t kept_bytes = 0;      ///< text bytes sent, before the marker
};

/// Caps the text a row sends at max_bytes (its text blocks and tool_result text, in order, cut at
/// a UTF-8 boundary); where the cap falls the text ends with the marker "\n[ctxfold: row ID
/// truncated: K of N bytes shown; the whole row: `ctxfold show ID`, ...]" and later text strings
/// of the row are emptied; ID is the row's model/quoted_id.hpp quoted_id. tool_use inputs, images
/// and other blocks are left whole. A capped row is recorded in `out`. The stored node is never changed: grep, expand and show read it whole.
void cap_row(Node& n, std::int64_t max_bytes, std::vector<TruncatedRow>& out);

/// One part of a rendered context, in request order. kind: system | prefix | summary | recap |
/// folds | notes | frames | tail. "system" is the leading run of system-role messages; "prefix"
/// holds raw messages the spine keeps before a summary's splice point; "summary" the strategy's
/// own summaries (rolling: its one summary; lcm: a run of tree nodes); "folds" the lcm folds a
/// rolling render reads; "tail" everything after the last summary or fold (or after the system
/// run when none applies). Empty sections are omitted.
/// estimated_tokens is the local estimate (tokens/estimate.hpp) of the section's nodes.
struct Section {
  std::string kind;
  std::vector<std::string> ids;
  std::int64_t estimated_tokens = 0;
};

/// A repair the renderer had to make so the request is valid for every provider: a tool_use with
/// no result gets a synthetic error result ("synthetic_result"); a tool_result whose call is not
/// in the context is turned into text ("orphan_result_as_text").
struct Repair {
  std::string kind;
  std::string node;  ///< the node holding the call (synthetic_result) or the result (orphan_result_as_text)
  std::string tool_use_id;
};

/// Anthropic renders: a system message after the first user/assistant message is kept in place as
/// a user text block starting with this marker (only the leading run goes to "system").
inline constexpr const char* kMidSystemPrefix = "[system] ";

/// Text of the synthetic tool_result added for a call whose result is not in the context.
inline constexpr const char* kNoToolResultText = "[ctxfold: no tool result recorded]";

/// One provider-neutral message after tool-pairing repair, in request order. Consecutive
/// assistant nodes form one message (a model turn split over several records); right after it
/// comes one role "tool" message (kind "tool_results") holding a tool_result for each of its
/// tool_use blocks in call order: the recorded result moved up from wherever it sits later in the
/// context, or a synthetic is_error result (kNoToolResultText). A tool_result with no call before
/// it becomes a text block "[tool result for ID, whose call is not in this context]\n<text>".
/// The summary is a user-role message of kind "summary". ids: the nodes whose content is in it.
/// An imported summary that records the items it stands for (metadata.replacement_history: a
/// Codex compaction's new history, each item's type, role and block count) is one message per
/// item, in the item's role (developer and system → system), kind "summary", with `part` its index.
struct RenderedMessage {
  std::string role;  ///< system | user | assistant | tool
  std::string kind;  ///< message | summary | tool_results
  std::vector<std::string> ids;
  Json content = Json::array();
  std::int64_t part = -1;  ///< a split summary: the index of its replacement_history item
};

/// A stored fold substituted for its covered segment: its id, its depth in the lcm tree
/// (metadata.depth, 1 for a leaf) and the source range it stands for (first/last covered ids and
/// their seqs, count of covered ids). kind "lcm" (an lcm summary), "archive" (a snapcompact
/// archive read as text by another strategy) or "region" (a region summary,
/// `compact --from/--to`: docs/strategies.md "region summaries").
struct RenderedFold {
  std::string id;
  std::string kind{label_name(StrategyLabel::lcm)};
  std::int64_t depth = 1;
  std::string first, last;
  std::int64_t first_seq = 0, last_seq = 0, count = 0;
  /// The ids fold_header quotes for id, first and last (model/quoted_id.hpp: in a fork, the
  /// source's ids, so the header is the source's).
  std::string quoted, quoted_first, quoted_last;
};

/// The line a render puts before an lcm fold's text so the model sees the node's id and source
/// range and how to open it: "[ctxfold lcm summary ID, depth D: N source rows FIRST … LAST; `ctxfold
/// expand ID` reads them]", with the quoted ids (seqs and storage ids differ in a fork; these do not).
/// An archive fold's line: "[ctxfold snapcompact archive ID: the earlier conversation as text, N
/// source rows FIRST … LAST; `ctxfold expand ID` reads them]".
std::string fold_header(const RenderedFold& f);

/// The context a model reads from HEAD: the ordered nodes whose content enters the request
/// (summary view nodes in place of their covered segments, then raw messages), before provider
/// conversion.
struct Rendered {
  std::string session;
  std::string head;
  std::string strategy;
  std::vector<Node> items;         ///< model-input nodes in request order (events skipped)
  std::vector<std::string> reads;  ///< ids whose content entered the request, in order
  std::vector<Section> sections;
  std::vector<Repair> repairs;
  /// Local estimate of the whole context (tokens/estimate.hpp): the items' estimates less the
  /// thinking of turns before the latest user turn where the provider drops it.
  std::int64_t estimated_tokens = 0;
  std::vector<std::int64_t> item_tokens;          ///< estimate_node(items[i]).total
  std::vector<std::int64_t> item_prior_thinking;  ///< estimate_node(items[i]).prior_turn_thinking
  /// The figure shown to users, labelled estimated | calibrated | measured (render/token_figure.hpp
  /// token_figure).
  TokenFigure tokens;
  std::int64_t spine_length = 0;   ///< nodes visited on HEAD's spine (covered segments skipped)
  std::optional<std::string> summary;     ///< the rolling summary substituted, when one was
  /// Stored folds substituted (lcm tree nodes), in request order; each item's content starts with
  /// its fold_header block (added at render time, never stored).
  std::vector<RenderedFold> folds;
  std::vector<RenderedMessage> messages;  ///< items after tool-pairing repair
  /// Facts about a damaged ledger met on the walk (a cycle, a missing predecessor, a summary
  /// whose predecessor is not its splice point); the render stops or renders raw instead.
  std::vector<std::string> warnings;
  /// Rows whose text was cut by RenderOptions::max_row_bytes ("truncated" in render's JSON).
  std::vector<TruncatedRow> truncated;
  /// strategy snapcompact: the archive substituted (its item's content is the frame blocks), and
  /// the frames' description (snapcompact/archive.hpp FrameSet::to_json); the PNGs themselves are
  /// in the item's image blocks.
  std::optional<std::string> archive;
  Json frames;
  /// strategy snapcompact for a model that reads no images: "rolling" (the render is rolling's).
  std::optional<std::string> fallback;
  /// The notes node rendered first (section "notes"), when the session has notes.
  std::optional<std::string> notes;
  SystemPromptInfo system;
};

/// Walks HEAD's predecessor spine and substitutes the active summary for its covered segment when
/// every covered node lies on the spine (docs/model.md "How a render uses a summary"); other
/// branches render raw. lcm folds are substituted the same way: at a node that ends the coverage of
/// one or more lcm summaries, the one covering most (the highest tree node) whose splice holds is
/// taken; under strategy rolling a fold that holds the rolling summary's last covered node (or the
/// summary itself) is passed over so the two never overlap, and its smaller children may apply
/// instead. Cost is proportional to what is rendered: a covered segment is skipped by jumping from
/// its last id to the summary's splice point, never walked. Because a node has one predecessor,
/// reaching covers.last puts the whole (contiguous, invariant 3) segment on the spine; the renderer
/// checks the splice (summary predecessor == predecessor of covers.first) and otherwise renders raw
/// with a warning. A summary that itself sits on the spine (imported compactions) is admitted where
/// it sits and its segment is still jumped. Event nodes and other view nodes are transparent. The
/// walk is bounded by the database's node count and stops at a cycle or a missing predecessor
/// (recorded in warnings), never loops. Nodes with seq > as_of do not exist for the walk.
/// Throws Error(bad_input,"render.no_head") for a session without HEAD and
/// Error(bad_input,"node.unknown") for an unknown --head (or one from another session).
Rendered render_context(Store& store, const std::string& session, const RenderOptions& opts);

/// The JSON document `render` prints: {"schema":"ctxfold.render/1","session","head","strategy",
/// "format","summary","folds":[{"id","depth","covers":{"first","last","first_seq","last_seq",
/// "count"}}],"reads","sections","estimated_tokens","tokens":{"value","kind","estimated",
/// "calibration"},"spine_length","repairs","warnings","system_prompt","messages"} plus "system" for
/// anthropic, "text" for text (whose "messages" are ctxfold's); gemini has "contents" (and
/// "systemInstruction") instead of "messages" (render/format_gemini.hpp), responses
/// "instructions" and "input" (render/format_responses.hpp).
/// openai: thinking and opaque blocks are dropped, images become image_url data URLs, a tool
/// result's content becomes a string, a tool-call id over 40 bytes is sent shortened
/// (render_detail::openai_tool_call_id) and "tool_call_ids" lists [{"id","original"}] for each. anthropic: the leading system messages joined by a blank
/// line (later ones stay in place as user text marked kMidSystemPrefix); thinking
/// kept only with a signature; opaque dropped except an anthropic redacted_thinking block; empty
/// text blocks dropped; tool_result blocks first in their user message. openai: chat-completions messages (assistant tool calls as "tool_calls", results as
/// role "tool"); anthropic: "system" + "messages" with tool_use/tool_result blocks, consecutive
/// same-role turns merged; ctxfold: neutral nodes. Byte-identical for identical state.
Json render_to_json(const Rendered& r, RenderFormat format);

/// Exactly the provider request body (`render --body`): {"messages":[...]} for openai,
/// {"system":...,"messages":[...]} for anthropic, {"systemInstruction"?,"contents":[...]} for
/// gemini (render/format_gemini.hpp), {"instructions"?:...,"input":[...]} for responses (OpenAI
/// Responses items, render/format_responses.hpp).
Json render_request_body(const Rendered& r, RenderFormat format);

/// The "system" member of render_request_body(r, RenderFormat::anthropic) (a string, or an array
/// of text blocks); null when the body has none. Reads the leading system messages only.
Json anthropic_request_system(const Rendered& r);

/// render_to_json and render_request_body of formats openai and anthropic one message at a time,
/// for verify-invariants (docs/invariants.md "Memory"): calls on_message with each message of
/// render_request_body(r, format)["messages"] in order (the same messages as the document's), and
/// returns sha256_hex(dump_json(render_to_json(r, format))) when digest is set ("" when not). Holds
/// one converted message at a time (Anthropic: one merged turn), never the body or the document.
/// Other formats: an internal Error (exit 70).
std::string render_stream(const Rendered& r, RenderFormat format, const std::function<void(const Json&)>& on_message,
                          bool digest);

/// Human-readable transcript for `--format text`.
std::string render_to_text(const Rendered& r);

}  // namespace ctxfold
