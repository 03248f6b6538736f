// Claude Code session JSONL importer (docs/import.md "Claude Code"): the private declarations its parts share
// (lib/import/claude_code/*.cpp; import_claude_code itself is in lib/import/claude_code.cpp).
//
// Two passes: pass 1 streams the file through a SAX handler (ScanSax: only the handful of
// depth-1/2 fields linking needs; no JSON tree) and keeps a fixed-size skeleton per line (ids,
// links, flags, byte offset); the plan step merges streamed assistant lines, resolves parents,
// breaks cycles, linearizes parallel tool results and turns compactions into summary view nodes,
// all on the skeleton; pass 2 re-reads each node's lines by offset (one DOM parse per line) and
// appends nodes parents-first.
//
// Memory model. Content is never held beyond the node being written (bounded by the longest
// line). What grows with the file is the skeleton, O(lines) at a small constant:
//   - Line: 56 bytes per record (strings are 32-bit ids into one Interner; tool_result ids in a
//     shared pool; a boundary's logical parent in a side map), in fixed chunks (util/chunked.hpp:
//     no reallocation, so no copy and no 3x transient peak while it grows);
//   - Interner: each distinct id (uuid, message id, tool id, type name) once: its bytes behind a
//     1-byte length, a 4-byte place and 8-16 bytes of hash index (~50 bytes for a uuid);
//   - by_uuid / tool_use_line: 4 bytes per interned id each (freed before pass 2);
//   - node_of_ and session_of_line_ (the latter freed before pass 2): 4 bytes per line each;
//   - Plan: 40 bytes per node, chunked; cycles, covers, conflict renames and a resumed import's
//     stored predecessors are side tables (rare); planning steps use flat tables, not node maps.
// That is ~130-150 bytes per line during pass 1 and ~190 during pass 2 (~200 MB at 10^6 lines),
// not flat. Duplicate detection keeps no digests: when a uuid repeats, both records are re-read by
// offset and their payloads compared (a handful of times per file). Flat memory needs a
// bounded-window streaming design that resolves older parents and a compaction's covered chain
// through the database (parents precede children in every sample); see bench/README.md.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <string_view>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "import/import.hpp"
#include "import/jsonl_reader.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"
#include "util/chunked.hpp"
#include "util/interner.hpp"

namespace ctxfold::cc_import {

namespace fs = std::filesystem;

inline constexpr const char* kFormat = "claude-code";

enum class LineKind : std::uint8_t { keep, node, skip };

/// What pass 1 keeps of one record: enough to link, merge and place it, never its content.
/// Fixed size (56 bytes): strings are interned ids, tool_result ids live in a shared pool, a
/// compact boundary's logical parent in a side map (Skeleton::logical_parent).
struct Line {
  std::int64_t line = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint32_t type = 0;  ///< interned type name ("non-object" / "unknown" when absent)
  std::uint32_t uuid = 0;
  std::uint32_t parent = 0;
  std::uint32_t msg_id = 0;   ///< assistant message.id
  std::uint32_t results = 0;  ///< user line: its tool results in Skeleton::result_pool (0 none): count, then ids
  std::int32_t part = 0;
  std::int32_t next = -1;  ///< the next line merged into the same node (plan step), file order
  LineKind kind = LineKind::keep;
  bool glued : 1 = false;            ///< the physical line held several records
  bool event : 1 = false;            ///< progress/system/unknown: a transparent chain record
  bool sidechain : 1 = false;
  bool compact_summary : 1 = false;
  bool boundary : 1 = false;
  bool conflict : 1 = false;     ///< same uuid as an earlier line, different payload
  bool result_only : 1 = false;  ///< a user line whose content is only tool_result blocks
  bool injected : 1 = false;     ///< a compaction worker's record (offset = index in Importer::injected_)
  bool rendered : 1 = false;          ///< an attachment with "rendered" text the client sends the model
  bool rendered_user : 1 = false;     ///< ... whose renderedRole is "user" (else "system")
  bool rendered_unknown : 1 = false;  ///< ... whose renderedRole is neither
  bool rendered_beside : 1 = false;   ///< ... renderedBesideToolResult: a block beside a tool result
  bool turn_end : 1 = false;  ///< a system turn_duration / stop_hook_summary record: the turn is over
};

struct Skeleton {
  Interner ids;
  Chunked<Line> lines;
  std::vector<std::int32_t> by_uuid;        ///< interned uuid -> first kept occurrence (-1 none)
  std::vector<std::int32_t> tool_use_line;  ///< interned tool_use id -> assistant line (-1 none)
  /// Tool results of user lines: per line its count, then its tool_use ids (interned); entry 0 unused.
  std::vector<std::uint32_t> result_pool{0};
  std::unordered_map<std::int32_t, std::uint32_t> logical_parent;  ///< boundary line -> logicalParentUuid (interned)
  std::string inner_session;                ///< first sessionId seen
  std::string first_agent_id;
  std::vector<std::pair<std::string, std::string>> task_prompts;  ///< (prompt hash, tool_use id), file order
  std::unordered_map<std::string, std::string> agent_tool_use;  ///< agentId -> Task tool_use id
  std::vector<std::pair<std::int64_t, std::string>> bad;        ///< unparseable bytes to keep
  /// Hooks Claude Code ran around one tool call, from its hook_progress lines (data.hookEvent,
  /// data.hookName, data.command, toolUseID), keyed by the interned tool_use id.
  struct HookRuns {
    std::string pre_name;                   ///< "PreToolUse:<tool>"
    std::vector<std::string> pre_commands;  ///< PreToolUse hook commands, file order
    int post = 0;                           ///< PostToolUse and PostToolUseFailure runs
  };
  std::unordered_map<std::uint32_t, HookRuns> hooks;
  std::uint32_t t_user = 0, t_assistant = 0, t_system = 0, t_progress = 0;

  static std::int32_t get(const std::vector<std::int32_t>& v, std::uint32_t id) {
    return id != 0 && id < v.size() ? v[id] : -1;
  }
  static void put_first(std::vector<std::int32_t>& v, std::uint32_t id, std::int32_t value) {
    if (id == 0) return;
    if (id >= v.size()) v.resize(std::max<std::size_t>(id + 1, v.size() + v.size() / 2), -1);
    if (v[id] < 0) v[id] = value;
  }
  int line_of(std::uint32_t uuid) const { return get(by_uuid, uuid); }
  /// The number of tool results of user line ln, and the first of their ids (pass 1 and plan only:
  /// the pool is freed before pass 2).
  std::uint32_t n_results(const Line& ln) const { return ln.results ? result_pool[ln.results] : 0; }
  const std::uint32_t* result_ids(const Line& ln) const { return result_pool.data() + ln.results + 1; }
  /// A compact boundary's logicalParentUuid (interned; 0 none).
  std::uint32_t logical_parent_of(int line) const {
    auto it = logical_parent.find(line);
    return it == logical_parent.end() ? 0 : it->second;
  }
  std::string str(std::uint32_t id) const { return ids.str(id); }
};

inline bool is_obj(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object();
}

inline std::string str_at(const Json& j, const char* key) { return json_str(j, key); }

/// Pass 1 (scan.cpp). warn may be empty (scanning the main file for a subagent's link).
/// max_line: the record limit in bytes (JsonlReader).
Skeleton scan(const std::string& path, const JsonlReader::Warn& warn, bool keep_bad,
              const std::optional<ResumePoint>& resume = std::nullopt,
              std::uint64_t max_line = JsonlReader::kDefaultMaxRecord);

inline int parent_line(const Skeleton& sk, int i) { return sk.line_of(sk.lines[i].parent); }

/// True for a user line holding only tool results (its content was checked in pass 1).
inline bool result_only(const Skeleton& sk, const Line& ln) { return ln.type == sk.t_user && ln.result_only; }

/// An earlier line of the streamed assistant message line i continues: consecutive chain lines
/// sharing message.id form one API message (docs/import.md "Claude Code"). The walk passes transparent events
/// and tool results, because Claude Code runs tools while the response still streams: a
/// message's later tool_use lines can hang off the result of an earlier one (seen in
/// agent-aac57f5: lines 29-31 continue message fsVEw3 after result line 28).
int merge_target(const Skeleton& sk, int i);

enum class PlanKind : std::uint8_t { message, summary, event };

inline const char* kind_name(PlanKind k) {
  switch (k) {
    case PlanKind::summary: return kind::kSummary;
    case PlanKind::event: return kind::kEvent;
    default: return kind::kMessage;
  }
}

/// One node to write: its source lines, its predecessor and how it got there. Fixed size (40
/// bytes); the rare extras (cycle report, covered plans, a renamed stored id, a stored
/// predecessor's id) live in Importer side tables.
struct Plan {
  std::int32_t first = -1;  ///< first source line; the others follow Line::next, file order
  std::int32_t last = -1;   ///< last source line
  std::int32_t pred = -1;
  std::int32_t session = 0;
  std::int32_t boundary = -1;    ///< summary: the compact_boundary plan (or -1)
  std::int32_t cover_last = -1;  ///< summary: last covered plan (the logical parent)
  std::uint32_t missing_pred = 0;          ///< interned id, 0 none
  std::uint32_t cross_session_parent = 0;  ///< interned id, 0 none
  std::uint32_t stored_pred = 0;  ///< resumed import: the predecessor is a node stored by an earlier run (Importer::stored_preds_, 0 none)
  PlanKind kind = PlanKind::message;
  bool pred_changed = false;  ///< predecessor differs from the source's parentUuid
  bool emitted = false;
};

struct SessionSlot {
  SessionInfo info;
  int root_line = -1;
  bool begun = false;
};

template <typename V>
void release(V& v) {
  V().swap(v);
}

class Importer {
 public:
  Importer(const std::string& path, ImportSink& sink) : path_(path), sink_(sink), resume_(sink.resume()) {}

  void run();

 private:
  void setup_sessions();
  /// A sub-agent file's session: its id under the main session, and the Task call it runs for
  /// (found by scanning the main file).
  void link_subagent(SessionSlot& main, const fs::path& p);
  /// One session per inline sidechain root of a main file (session_of_line_).
  void assign_sidechains();
  /// The root of the sidechain line i is on (memo: line -> root, -2 not walked yet).
  int sidechain_root(int i, std::vector<int>& memo) const;
  /// Task prompt hash -> the tool_use ids of the calls with that prompt, file order.
  using PromptCalls = std::unordered_map<std::string, std::vector<std::string>>;
  /// The session of the sidechain rooted at line r, linked to the first Task call not linked yet
  /// (used_calls) whose prompt it starts with.
  SessionSlot sidechain_session(int r, const PromptCalls& prompts,
                                std::unordered_set<std::string>& used_calls);
  void plan_nodes();
  void check_resumable() const;
  std::string stored_node_of_uuid(const std::string& uuid, const std::string& session);
  std::string stored_message_id(const std::string& id);
  std::string stored_results_end(const std::string& step);
  void break_cycles();
  void attach_missing_parents();
  void linearize_results();
  void inject_worker_reminders();
  void plan_compactions();
  void compute_covers();
  void place_attachments();
  void read_request_shapes();
  /// Incremental import (ImportSink::hold_open_turn): marks the plans appended lines may still
  /// change (held_) and tells the sink where the first of their lines starts
  /// (docs/formats/claude-code.md "Read while it is written").
  void hold_open_turn();
  /// The first line of the open turn at the end of the read: the first line of the plan holding
  /// the last assistant line, or the line after a turn_end record that follows it; size() when
  /// nothing is open.
  int open_turn_start() const;
  /// A compact_boundary plan's compactMetadata (read once).
  const Json& boundary_metadata(int boundary);
  /// The compact_boundary plan of a compact-summary plan: its predecessor, or the first one
  /// before the attachment records between them; -1 none.
  int boundary_of(int summary);
  /// Ids a boundary names as kept verbatim after its summary (preservedMessages, else the
  /// preservedSegment's head and tail).
  std::vector<std::string> preserved_ids(int boundary);
  /// True when a compact-summary plan's boundary preserves a message this file holds.
  bool summary_preserves(int summary);
  Json rendered_blocks(const Line& ln, const Json& record);
  void deliver_attachments(int host, Json& content, Json& meta);
  void emit(int p);
  void write(int p);
  Node build(int p);
  /// What build() gathers from a plan's lines before the node is finished (emit.cpp).
  struct Built;
  /// metadata.source of a node whose first line is `first`.
  Json source_of(const Line& first);
  /// An event line (line li): metadata.event, a system line's text, a compact boundary's links, the record.
  void add_event_line(int li, Json v, Built& b);
  /// A message line (record v): its content blocks, metadata and envelope (metadata.source.parts).
  void add_message_line(const Line& ln, Json v, Built& b);
  /// A message line's message.content (c, may be null) as blocks.
  void add_message_content(const Json* c, const Line& ln, Built& b);
  /// An assistant line's usage, stop reason, model and request ids (with the request's shape).
  void note_assistant_line(const Line& ln, const Json& v, const Json& msg, Built& b);
  /// After the lines: an own attachment's blocks, or a message's role, attachments and metadata.
  void finish_message(int p, bool own_attachment, Built& b);
  /// A summary plan's metadata: the compaction's facts first, then meta's.
  void wrap_summary(const Plan& pl, Json& meta);
  Json convert_block(const Json& b, std::int64_t line, Json& extras, std::size_t index);
  Json convert_image(const Json& b, std::int64_t line);
  void note_hook_blocked(const Json& content, const Json& record, Json& meta);
  std::string raw_bytes(const Line& ln);
  void begin(int s);
  std::string plan_id(int p) const { return sk_.str(sk_.lines[plans_[p].first].uuid); }
  /// The id the plan's node was stored under (differs from plan_id after a conflict rename).
  std::string final_id(int p) const {
    auto it = renamed_.find(p);
    return it == renamed_.end() ? plan_id(p) : it->second;
  }
  const Line& first_line(int p) const { return sk_.lines[plans_[p].first]; }
  std::string root_text_hash(int line);
  Json persisted_outputs(const Json& content);
  std::string parent_node_of_tool_use(const Skeleton& sk, const std::string& tool_use_id) const;

  std::string path_;
  ImportSink& sink_;
  Skeleton sk_;
  Chunked<Plan> plans_;
  /// Stored predecessors' ids (Plan::stored_pred); entry 0 is "none".
  std::vector<std::string> stored_preds_{std::string()};
  const std::string& stored_pred(const Plan& p) const { return stored_preds_[p.stored_pred]; }
  void set_stored_pred(Plan& p, std::string id) {
    if (id.empty()) {
      p.stored_pred = 0;
      return;
    }
    p.stored_pred = static_cast<std::uint32_t>(stored_preds_.size());
    stored_preds_.push_back(std::move(id));
  }
  std::unordered_map<int, std::vector<std::string>> cycle_;  // plan -> reported loop
  std::unordered_map<int, std::vector<int>> covers_;         // summary plan -> covered plans
  std::unordered_map<int, std::string> renamed_;             // plan -> stored id when not its uuid
  std::vector<int> node_of_;  // line -> plan
  std::vector<char> on_stack_;  // emit(): plan -> on its stack (all zero between calls)
  std::vector<SessionSlot> sessions_;
  std::vector<int> session_of_line_;
  std::string stem_;
  fs::path results_dir_;
  std::string base_;
  bool subagent_ = false;
  std::unique_ptr<JsonlReader> reader_;
  std::ifstream raw_;
  /// Records of the session's compaction workers spliced into the main chain (see
  /// inject_worker_reminders): the record, its file (relative to the main file's folder), its line.
  struct Injected {
    Json record;
    std::string file;
    std::int64_t line = 0;
  };
  std::vector<Injected> injected_;
  /// Tool calls whose PreToolUse blocking error a spliced record already holds (interned ids).
  std::unordered_set<std::uint32_t> block_recorded_;
  /// Where the client delivers an attachment's rendered text (place_attachments): before the
  /// text of the user prompt it follows, appended to the tool result it follows ("system"
  /// reminders), or as a text block beside that tool result.
  enum class Placement : std::uint8_t { before, into_result, beside };
  struct Delivered {
    int plan = -1;
    Placement at = Placement::before;
  };
  std::unordered_map<int, std::vector<Delivered>> delivered_;  ///< host plan -> its attachments, chain order
  std::unordered_map<int, int> host_of_;                       ///< attachment plan -> host plan
  std::unordered_set<int> own_attachment_;  ///< attachment plans written as user messages of their own
  std::unordered_map<int, Json> compact_meta_;  ///< boundary plan -> compactMetadata
  std::unordered_set<int> seam_;  ///< user plans a user record joins on the wire (their text ends "\n")
  /// The client's request records (read_request_shapes): api-request-shape records by shapeHash
  /// ({system, tools} as sent, without cache markers) and each api-request id's shapeHash.
  /// A request's shape is the newest api-request-shape record of its hash written before the
  /// request record (not a later rewrite of it), so a read that ends or resumes anywhere between
  /// them gives every node the same metadata (docs/formats/claude-code.md "Read while it is written").
  std::unordered_map<std::string, std::shared_ptr<const Json>> shapes_;
  std::unordered_map<std::string, std::pair<std::string, std::shared_ptr<const Json>>> shape_of_request_;
  std::string last_shape_;  ///< the shapeHash of the newest assistant node built (file order)
  std::optional<ResumePoint> resume_;  ///< set: read from there, earlier records are stored
  std::vector<char> held_;             ///< plan -> held back for the next run (hold_open_turn)
  int held_line_ = -1;                 ///< the first line held back (-1: none)
  int real_lines_ = 0;                 ///< lines read from the file (injected ones follow them)
};

}  // namespace ctxfold::cc_import
