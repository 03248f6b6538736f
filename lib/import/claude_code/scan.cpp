// Claude Code importer, pass 1: the SAX scan that keeps a fixed-size skeleton per line.

#include "import/claude_code/skeleton.hpp"
#include "util/json_sax.hpp"

namespace ctxfold::cc_import {

namespace {

/// The fields pass 1 needs from one record, collected by a SAX handler without building a tree:
/// depth-1 keys, message.{id,content}, data.agentId, toolUseResult.agentId and per content block
/// type/id/tool_use_id/input.prompt. Same semantics as reading them from the DOM: a string field is
/// "" unless its value is a string, a flag is false unless it is the boolean true, and a repeated
/// key overrides the earlier value (nlohmann keeps the last).
class ScanSax final : public JsonEvents {
 public:
  struct Block {
    bool object = false;
    std::string type, id, tool_use_id;
    bool input_object = false;
    bool has_prompt = false;
    std::string prompt_hash;
  };

  bool root_object = false;
  std::string type, uuid, parent, session_id, agent_id, subtype, logical_parent, parent_tool_use;
  bool sidechain = false, compact_summary = false;
  bool data_object = false;
  std::string data_agent;
  std::string data_hook_event, data_hook_name, data_command;  ///< hook_progress data fields
  std::string tool_use_id;                                    ///< depth-1 toolUseID (progress lines)
  bool msg_object = false;
  std::string msg_id;
  bool content_array = false;
  std::vector<Block> blocks;  ///< first n_blocks are this record's
  std::size_t n_blocks = 0;
  bool tur_object = false;
  std::string tur_agent;
  bool rendered = false;         ///< attachment: a non-empty "rendered" array (what the client sends)
  std::string rendered_role;     ///< attachment: "renderedRole"
  bool rendered_beside = false;  ///< attachment: "renderedBesideToolResult": true
  /// The first field whose value is of a type Claude Code never writes there ("uuid" a number,
  /// "message" a string, "message.content" an object...): read as absent, reported by scan.
  std::string mistyped;

  void reset() {
    root_object = false;
    mistyped.clear();
    for (auto* s : {&type, &uuid, &parent, &session_id, &agent_id, &subtype, &logical_parent, &parent_tool_use,
                    &data_agent, &data_hook_event, &data_hook_name, &data_command, &tool_use_id, &msg_id, &tur_agent})
      s->clear();
    sidechain = compact_summary = data_object = msg_object = content_array = tur_object = false;
    rendered = rendered_beside = false;
    rendered_role.clear();
    n_blocks = 0;
    stack_.clear();
  }

  // ---- JsonEvents (sax_parse_json: nlohmann's SAX events) ----
  bool null() override {
    check_type(V_NULL);
    return scalar();
  }
  bool boolean(bool b) override {
    check_type(V_OTHER);
    if (stack_.size() == 1 && stack_.back().ctx == C_ROOT) {
      if (stack_.back().slot == S_SIDECHAIN) sidechain = b;
      if (stack_.back().slot == S_COMPACT) compact_summary = b;
      if (stack_.back().slot == S_BESIDE) rendered_beside = b;
    }
    return scalar();
  }
  bool number_integer(std::int64_t) override { return number(); }
  bool number_unsigned(std::uint64_t) override { return number(); }
  bool number_float(double) override { return number(); }
  bool string(std::string_view s) override {
    if (stack_.empty()) return true;
    check_type(V_STRING);
    Frame& f = stack_.back();
    if (f.ctx == C_CONTENT) {
      new_block();
      return true;
    }
    if (std::string* dst = target(f)) *dst = s;
    if (f.ctx == C_INPUT && f.slot == S_PROMPT) {
      Block& b = blocks[n_blocks - 1];
      b.has_prompt = true;
      b.prompt_hash = sha256_hex(s);
    }
    return true;
  }
  bool start_object() override {
    check_type(V_OBJECT);
    return open(true);
  }
  bool start_array() override {
    check_type(V_ARRAY);
    return open(false);
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool key(std::string_view k) override {
    Frame& f = stack_.back();
    f.slot = S_NONE;
    switch (f.ctx) {
      case C_ROOT:
        if (k == "type") f.slot = S_TYPE, type.clear();
        else if (k == "uuid") f.slot = S_UUID, uuid.clear();
        else if (k == "parentUuid") f.slot = S_PARENT, parent.clear();
        else if (k == "sessionId") f.slot = S_SESSION, session_id.clear();
        else if (k == "agentId") f.slot = S_AGENT, agent_id.clear();
        else if (k == "isSidechain") f.slot = S_SIDECHAIN, sidechain = false;
        else if (k == "isCompactSummary") f.slot = S_COMPACT, compact_summary = false;
        else if (k == "subtype") f.slot = S_SUBTYPE, subtype.clear();
        else if (k == "logicalParentUuid") f.slot = S_LOGICAL, logical_parent.clear();
        else if (k == "parentToolUseID") f.slot = S_PTU, parent_tool_use.clear();
        else if (k == "toolUseID") f.slot = S_TOOL_USE_ID, tool_use_id.clear();
        else if (k == "data")
          f.slot = S_DATA, data_object = false, data_agent.clear(), data_hook_event.clear(), data_hook_name.clear(),
          data_command.clear();
        else if (k == "message")
          f.slot = S_MESSAGE, msg_object = false, msg_id.clear(), content_array = false, n_blocks = 0;
        else if (k == "toolUseResult") f.slot = S_TUR, tur_object = false, tur_agent.clear();
        else if (k == "rendered") f.slot = S_RENDERED, rendered = false;
        else if (k == "renderedRole") f.slot = S_RENDERED_ROLE, rendered_role.clear();
        else if (k == "renderedBesideToolResult") f.slot = S_BESIDE, rendered_beside = false;
        break;
      case C_MSG:
        if (k == "id") f.slot = S_MSG_ID, msg_id.clear();
        else if (k == "content") f.slot = S_CONTENT, content_array = false, n_blocks = 0;
        break;
      case C_DATA:
        if (k == "agentId") f.slot = S_DATA_AGENT, data_agent.clear();
        else if (k == "hookEvent") f.slot = S_HOOK_EVENT, data_hook_event.clear();
        else if (k == "hookName") f.slot = S_HOOK_NAME, data_hook_name.clear();
        else if (k == "command") f.slot = S_HOOK_COMMAND, data_command.clear();
        break;
      case C_TUR:
        if (k == "agentId") f.slot = S_TUR_AGENT, tur_agent.clear();
        break;
      case C_BLOCK: {
        Block& b = blocks[n_blocks - 1];
        if (k == "type") f.slot = S_B_TYPE, b.type.clear();
        else if (k == "id") f.slot = S_B_ID, b.id.clear();
        else if (k == "tool_use_id") f.slot = S_B_TUID, b.tool_use_id.clear();
        else if (k == "input") f.slot = S_B_INPUT, b.input_object = false, b.has_prompt = false;
        break;
      }
      case C_INPUT:
        if (k == "prompt") f.slot = S_PROMPT, blocks[n_blocks - 1].has_prompt = false;
        break;
      default:
        break;
    }
    return true;
  }

 private:
  enum Ctx : std::uint8_t { C_ROOT, C_MSG, C_DATA, C_TUR, C_CONTENT, C_BLOCK, C_INPUT, C_OTHER };
  enum Slot : std::uint8_t {
    S_NONE, S_TYPE, S_UUID, S_PARENT, S_SESSION, S_AGENT, S_SIDECHAIN, S_COMPACT, S_SUBTYPE, S_LOGICAL, S_PTU,
    S_DATA, S_MESSAGE, S_TUR, S_MSG_ID, S_CONTENT, S_DATA_AGENT, S_TUR_AGENT, S_B_TYPE, S_B_ID, S_B_TUID,
    S_B_INPUT, S_PROMPT, S_TOOL_USE_ID, S_HOOK_EVENT, S_HOOK_NAME, S_HOOK_COMMAND,
    S_RENDERED, S_RENDERED_ROLE, S_BESIDE
  };
  struct Frame {
    Ctx ctx;
    Slot slot;
  };
  std::vector<Frame> stack_;
  enum Value : std::uint8_t { V_NULL, V_STRING, V_OBJECT, V_ARRAY, V_OTHER };

  bool number() {
    check_type(V_OTHER);
    return scalar();
  }
  /// Notes in `mistyped` a value of the wrong type for the field it is read into: the ids and
  /// type of a record are strings (or null), message an object, its content a string or array.
  void check_type(Value v) {
    if (stack_.empty() || !mistyped.empty()) return;
    const Frame& f = stack_.back();
    if (f.ctx == C_ROOT && stack_.size() == 1) {
      const char* name = f.slot == S_TYPE      ? "type"
                         : f.slot == S_UUID    ? "uuid"
                         : f.slot == S_PARENT  ? "parentUuid"
                         : f.slot == S_SESSION ? "sessionId"
                                               : nullptr;
      if (name && v != V_STRING && v != V_NULL) mistyped = name;
      if (f.slot == S_MESSAGE && v != V_OBJECT && v != V_NULL) mistyped = "message";
    } else if (f.ctx == C_MSG && stack_.size() == 2 && f.slot == S_CONTENT && v != V_STRING && v != V_ARRAY &&
               v != V_NULL) {
      mistyped = "message.content";
    }
  }

  void new_block() {
    if (n_blocks == blocks.size()) blocks.emplace_back();
    Block& b = blocks[n_blocks++];
    b.object = false;
    b.type.clear();
    b.id.clear();
    b.tool_use_id.clear();
    b.input_object = false;
    b.has_prompt = false;
  }
  bool scalar() {
    if (!stack_.empty() && stack_.back().ctx == C_CONTENT) new_block();
    return true;
  }
  std::string* target(const Frame& f) {
    switch (f.slot) {
      case S_TYPE: return &type;
      case S_UUID: return &uuid;
      case S_PARENT: return &parent;
      case S_SESSION: return &session_id;
      case S_AGENT: return &agent_id;
      case S_SUBTYPE: return &subtype;
      case S_LOGICAL: return &logical_parent;
      case S_PTU: return &parent_tool_use;
      case S_MSG_ID: return &msg_id;
      case S_DATA_AGENT: return &data_agent;
      case S_HOOK_EVENT: return &data_hook_event;
      case S_HOOK_NAME: return &data_hook_name;
      case S_HOOK_COMMAND: return &data_command;
      case S_TOOL_USE_ID: return &tool_use_id;
      case S_RENDERED_ROLE: return &rendered_role;
      case S_TUR_AGENT: return &tur_agent;
      case S_B_TYPE: return f.ctx == C_BLOCK ? &blocks[n_blocks - 1].type : nullptr;
      case S_B_ID: return f.ctx == C_BLOCK ? &blocks[n_blocks - 1].id : nullptr;
      case S_B_TUID: return f.ctx == C_BLOCK ? &blocks[n_blocks - 1].tool_use_id : nullptr;
      default: return nullptr;
    }
  }
  bool open(bool object) {
    Ctx c = C_OTHER;
    if (stack_.empty()) {
      if (object) {
        c = C_ROOT;
        root_object = true;
      }
    } else {
      const Frame& f = stack_.back();
      if (f.ctx == C_CONTENT) {
        new_block();
        if (object) {
          c = C_BLOCK;
          blocks[n_blocks - 1].object = true;
        }
      } else if (f.ctx == C_ROOT && !object && f.slot == S_RENDERED) {
        rendered = true;
      } else if (f.ctx == C_ROOT && object && f.slot == S_DATA) {
        c = C_DATA, data_object = true;
      } else if (f.ctx == C_ROOT && object && f.slot == S_MESSAGE) {
        c = C_MSG, msg_object = true;
      } else if (f.ctx == C_ROOT && object && f.slot == S_TUR) {
        c = C_TUR, tur_object = true;
      } else if (f.ctx == C_MSG && !object && f.slot == S_CONTENT) {
        c = C_CONTENT, content_array = true;
      } else if (f.ctx == C_BLOCK && object && f.slot == S_B_INPUT) {
        c = C_INPUT, blocks[n_blocks - 1].input_object = true;
      }
    }
    stack_.push_back(Frame{c, S_NONE});
    return true;
  }
};

/// The SAX results of the records the reader parsed but next() has not returned yet (a glued
/// line parses all its records first), in order; and handlers to reuse (their buffers stay).
struct SaxQueue {
  std::deque<ScanSax> parsed;
  std::vector<ScanSax> spare;

  /// The reader's parser: one record's text into a handler queued in parsed.
  bool parse(std::string_view text) {
    ScanSax h;
    if (!spare.empty()) {
      h = std::move(spare.back());
      spare.pop_back();
    }
    h.reset();
    if (!sax_parse_json(text, h)) {
      spare.push_back(std::move(h));
      return false;
    }
    parsed.push_back(std::move(h));
    return true;
  }
};

/// A record's Line: where it is; a glued line's records are all marked glued.
Line record_line(Skeleton& sk, const JsonlRecord& rec) {
  Line ln;
  ln.line = rec.line;
  ln.offset = rec.offset;
  ln.length = rec.length;
  ln.part = rec.part;
  if (rec.part > 0) {
    ln.glued = true;
    for (std::size_t k = sk.lines.size(); k > 0 && sk.lines[k - 1].line == rec.line; --k) sk.lines[k - 1].glued = true;
  }
  return ln;
}

/// A progress line's links to subagents and the hook runs it reports.
void note_progress(Skeleton& sk, const ScanSax& v) {
  if (!v.data_agent.empty() && !v.parent_tool_use.empty())
    sk.agent_tool_use.emplace(v.data_agent, v.parent_tool_use);
  const std::string& call = v.tool_use_id.empty() ? v.parent_tool_use : v.tool_use_id;
  if (!v.data_hook_event.empty() && !call.empty()) {
    Skeleton::HookRuns& h = sk.hooks[sk.ids.intern(call)];
    if (v.data_hook_event == "PreToolUse") {
      if (h.pre_name.empty()) h.pre_name = v.data_hook_name;
      h.pre_commands.push_back(v.data_command);
    } else if (v.data_hook_event.rfind("PostToolUse", 0) == 0) {
      ++h.post;
    }
  }
}

/// An assistant line (line `index`): its message id, its tool calls and their Task prompts.
void note_assistant(Skeleton& sk, Line& ln, const ScanSax& v, std::int32_t index) {
  ln.msg_id = sk.ids.intern(v.msg_id);
  if (v.content_array)
    for (std::size_t k = 0; k < v.n_blocks; ++k) {
      const ScanSax::Block& b = v.blocks[k];
      if (!b.object || b.type != "tool_use" || b.id.empty()) continue;
      Skeleton::put_first(sk.tool_use_line, sk.ids.intern(b.id), index);
      if (b.input_object && b.has_prompt) sk.task_prompts.emplace_back(b.prompt_hash, b.id);
    }
}

/// A user line: its tool results, and the subagent its toolUseResult names.
void note_user(Skeleton& sk, Line& ln, const ScanSax& v) {
  ln.compact_summary = v.compact_summary;
  if (v.content_array) {
    bool only = v.n_blocks > 0;
    const auto at = static_cast<std::uint32_t>(sk.result_pool.size());
    sk.result_pool.push_back(0);  // the count, set below
    for (std::size_t k = 0; k < v.n_blocks; ++k) {
      const ScanSax::Block& b = v.blocks[k];
      if (b.object && b.type == "tool_result")
        sk.result_pool.push_back(sk.ids.intern(b.tool_use_id));
      else
        only = false;
    }
    if (sk.result_pool.size() > at + 1) {
      sk.result_pool[at] = static_cast<std::uint32_t>(sk.result_pool.size() - at - 1);
      ln.results = at;
    } else {
      sk.result_pool.pop_back();
    }
    ln.result_only = only;
  }
  if (v.tur_object && sk.n_results(ln) > 0 && !v.tur_agent.empty())
    sk.agent_tool_use.emplace(v.tur_agent, sk.str(sk.result_ids(ln)[0]));
}

/// Any other chain record, a transparent event: an attachment's rendered text, a compact boundary.
void note_event(Skeleton& sk, Line& ln, const ScanSax& v, std::int32_t index) {
  ln.event = true;
  if (v.rendered) {
    ln.rendered = true;
    ln.rendered_user = v.rendered_role == "user";
    ln.rendered_unknown =
        !v.rendered_role.empty() && v.rendered_role != "user" && v.rendered_role != "system";
    ln.rendered_beside = v.rendered_beside;
  }
  if (ln.type == sk.t_system && (v.subtype == "turn_duration" || v.subtype == "stop_hook_summary"))
    ln.turn_end = true;
  if (ln.type == sk.t_system && v.subtype == "compact_boundary") {
    ln.boundary = true;
    if (std::uint32_t lp = sk.ids.intern(v.logical_parent)) sk.logical_parent[index] = lp;
  }
}

}  // namespace

Skeleton scan(const std::string& path, const JsonlReader::Warn& warn, bool keep_bad,
              const std::optional<ResumePoint>& resume, std::uint64_t max_line) {
  Skeleton sk;
  sk.t_user = sk.ids.intern("user");
  sk.t_assistant = sk.ids.intern("assistant");
  sk.t_system = sk.ids.intern("system");
  sk.t_progress = sk.ids.intern("progress");
  const std::uint32_t t_non_object = sk.ids.intern("non-object");
  const std::uint32_t t_unknown = sk.ids.intern("unknown");
  JsonlReader reader(
      path, warn ? warn : JsonlReader::Warn([](std::int64_t, const std::string&, const std::string&) {}),
      [&](std::int64_t line, const std::string& raw) {
        if (keep_bad) sk.bad.emplace_back(line, raw);
      },
      max_line);
  SaxQueue queue;
  reader.set_parser([&](std::string_view text) { return queue.parse(text); });
  // Payload digest of a record, computed only when its uuid repeats (rare): the same digest the
  // store would compare, over the re-read record.
  auto payload = [&](std::uint64_t offset, std::uint64_t length, int part) {
    return dump_json(reader.read_at(offset, length, part));
  };
  if (resume) reader.start_at(resume->offset, resume->lines);
  JsonlRecord rec;
  while (reader.next(rec)) {
    ScanSax v = std::move(queue.parsed.front());
    queue.parsed.pop_front();
    struct Recycle {
      std::vector<ScanSax>& spare;
      ScanSax& v;
      ~Recycle() { spare.push_back(std::move(v)); }
    } recycle{queue.spare, v};

    Line ln = record_line(sk, rec);
    if (!v.mistyped.empty()) {
      // Read as absent, so the record is also kept verbatim.
      if (warn)
        warn(rec.line, "record.field_type",
             fmt::format("field \"{}\" holds a value of a type Claude Code never writes there; read as absent, "
                         "the record kept verbatim",
                         v.mistyped));
      // A line without a usable uuid is kept verbatim anyway (not a node).
      if (keep_bad && !v.uuid.empty()) sk.bad.emplace_back(rec.line, payload(rec.offset, rec.length, rec.part));
    }
    if (!v.root_object) {
      ln.type = t_non_object;
      sk.lines.push_back(ln);
      continue;
    }
    ln.type = v.type.empty() ? t_unknown : sk.ids.intern(v.type);
    if (sk.inner_session.empty()) sk.inner_session = v.session_id;
    if (sk.first_agent_id.empty()) sk.first_agent_id = v.agent_id;

    // Links to subagents (2.1.x): progress lines name agentId and the Task call.
    if (ln.type == sk.t_progress && v.data_object) note_progress(sk, v);
    if (v.uuid.empty()) {
      sk.lines.push_back(ln);
      continue;
    }
    ln.kind = LineKind::node;
    ln.uuid = sk.ids.intern(v.uuid);
    ln.parent = sk.ids.intern(v.parent);
    ln.sidechain = v.sidechain;

    if (int first = sk.line_of(ln.uuid); first >= 0) {
      const Line& f = sk.lines[first];
      if (payload(f.offset, f.length, f.part) == payload(rec.offset, rec.length, rec.part)) {
        if (warn)
          warn(rec.line, "id.duplicate",
               fmt::format("record '{}' appears again with an identical payload; counted once", v.uuid));
        ln.kind = LineKind::skip;
        sk.lines.push_back(ln);
        continue;
      }
      ln.conflict = true;
    }

    const auto index = static_cast<std::int32_t>(sk.lines.size());
    if ((ln.type == sk.t_user || ln.type == sk.t_assistant) && v.msg_object) {
      if (ln.type == sk.t_assistant)
        note_assistant(sk, ln, v, index);
      else
        note_user(sk, ln, v);
    } else {
      note_event(sk, ln, v, index);
    }
    if (!ln.conflict) Skeleton::put_first(sk.by_uuid, ln.uuid, index);
    sk.lines.push_back(ln);
  }
  return sk;
}

}  // namespace ctxfold::cc_import
