// Claude Code session JSONL importer (FORMATS.md §1).
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
//   - Line: 64 bytes per record (strings are 32-bit ids into one Interner; tool_result ids in a
//     shared pool);
//   - Interner: each distinct id (uuid, message id, tool id, type name) once, ~50 bytes
//     (bytes in 1 MiB blocks + pointer/length + open-addressing slot);
//   - by_uuid / tool_use_line: 4 bytes per interned id each (freed before pass 2);
//   - node_of_ and session_of_line_ (freed before pass 2): 4 bytes per line each;
//   - Plan: 40 bytes per node; cycles, covers and conflict renames are side maps (rare).
// That is ~150-200 bytes per line (~60 MB at 10^5 lines) instead of ~1 KB. Duplicate detection
// keeps no digests: when a uuid repeats, both records are re-read by offset and their payloads
// compared (a handful of times per file). Not yet flat: a bounded-window streaming design that
// resolves older parents and a compaction's covered chain through the database (parents precede
// children in every sample) would make it so; see bench/README.md.

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
#include "tokens/estimate.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "claude-code";

enum class LineKind : std::uint8_t { keep, node, skip };

/// Interns short strings (uuids, message and tool ids, type names) as dense 32-bit ids; 0 is the
/// empty string. Bytes live in 1 MiB blocks (never moved), the index is open addressing over ids.
class Interner {
 public:
  Interner() : ptr_{""}, len_{0}, slots_(1024, 0) {}
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;
  Interner(Interner&&) = default;
  Interner& operator=(Interner&&) = default;

  std::uint32_t intern(std::string_view s) {
    if (s.empty()) return 0;
    if ((ptr_.size() + 1) * 2 > slots_.size()) grow();
    std::size_t mask = slots_.size() - 1;
    for (std::size_t h = std::hash<std::string_view>{}(s) & mask;; h = (h + 1) & mask) {
      std::uint32_t id = slots_[h];
      if (id == 0) {
        id = static_cast<std::uint32_t>(ptr_.size());
        ptr_.push_back(store(s));
        len_.push_back(static_cast<std::uint32_t>(s.size()));
        slots_[h] = id;
        return id;
      }
      if (view(id) == s) return id;
    }
  }
  std::string_view view(std::uint32_t id) const { return {ptr_[id], len_[id]}; }
  std::string str(std::uint32_t id) const { return std::string(view(id)); }
  std::size_t size() const { return ptr_.size(); }

 private:
  static constexpr std::size_t kBlock = 1 << 20;
  const char* store(std::string_view s) {
    if (s.size() > kBlock / 4) {  // a long id gets its own block
      blocks_.emplace_back(new char[s.size()]);
      std::memcpy(blocks_.back().get(), s.data(), s.size());
      return blocks_.back().get();
    }
    if (blocks_.empty() || used_ + s.size() > kBlock) {
      blocks_.emplace_back(new char[kBlock]);
      cur_ = blocks_.back().get();
      used_ = 0;
    }
    char* p = cur_ + used_;
    std::memcpy(p, s.data(), s.size());
    used_ += s.size();
    return p;
  }
  void grow() {
    std::vector<std::uint32_t> slots(slots_.size() * 2, 0);
    std::size_t mask = slots.size() - 1;
    for (std::uint32_t id = 1; id < ptr_.size(); ++id) {
      std::size_t h = std::hash<std::string_view>{}(view(id)) & mask;
      while (slots[h] != 0) h = (h + 1) & mask;
      slots[h] = id;
    }
    slots_ = std::move(slots);
  }
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cur_ = nullptr;
  std::size_t used_ = 0;
  std::vector<const char*> ptr_;
  std::vector<std::uint32_t> len_;
  std::vector<std::uint32_t> slots_;
};

/// What pass 1 keeps of one record: enough to link, merge and place it, never its content.
/// Fixed size (64 bytes): strings are interned ids, tool_result ids live in a shared pool.
struct Line {
  std::int64_t line = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint32_t type = 0;  ///< interned type name ("non-object" / "unknown" when absent)
  std::uint32_t uuid = 0;
  std::uint32_t parent = 0;
  std::uint32_t logical_parent = 0;  ///< compact_boundary.logicalParentUuid
  std::uint32_t msg_id = 0;          ///< assistant message.id
  std::uint32_t results = 0;         ///< first tool_result.tool_use_id of a user line in Skeleton::result_pool
  std::uint32_t n_results = 0;
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
};

struct Skeleton {
  Interner ids;
  std::vector<Line> lines;
  std::vector<std::int32_t> by_uuid;        ///< interned uuid -> first kept occurrence (-1 none)
  std::vector<std::int32_t> tool_use_line;  ///< interned tool_use id -> assistant line (-1 none)
  std::vector<std::uint32_t> result_pool;   ///< tool_result ids of user lines (interned)
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
  std::string str(std::uint32_t id) const { return ids.str(id); }
};

bool is_obj(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object();
}

std::string str_at(const Json& j, const char* key) { return json_str(j, key); }

/// The fields pass 1 needs from one record, collected by a SAX handler without building a tree:
/// depth-1 keys, message.{id,content}, data.agentId, toolUseResult.agentId and per content block
/// type/id/tool_use_id/input.prompt. Same semantics as reading them from the DOM: a string field is
/// "" unless its value is a string, a flag is false unless it is the boolean true, and a repeated
/// key overrides the earlier value (nlohmann keeps the last).
class ScanSax {
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

  void reset() {
    root_object = false;
    for (auto* s : {&type, &uuid, &parent, &session_id, &agent_id, &subtype, &logical_parent, &parent_tool_use,
                    &data_agent, &data_hook_event, &data_hook_name, &data_command, &tool_use_id, &msg_id, &tur_agent})
      s->clear();
    sidechain = compact_summary = data_object = msg_object = content_array = tur_object = false;
    n_blocks = 0;
    stack_.clear();
  }

  // ---- nlohmann SAX interface ----
  bool null() { return scalar(); }
  bool boolean(bool b) {
    if (stack_.size() == 1 && stack_.back().ctx == C_ROOT) {
      if (stack_.back().slot == S_SIDECHAIN) sidechain = b;
      if (stack_.back().slot == S_COMPACT) compact_summary = b;
    }
    return scalar();
  }
  bool number_integer(Json::number_integer_t) { return scalar(); }
  bool number_unsigned(Json::number_unsigned_t) { return scalar(); }
  bool number_float(Json::number_float_t, const Json::string_t&) { return scalar(); }
  bool binary(Json::binary_t&) { return scalar(); }
  bool string(Json::string_t& s) {
    if (stack_.empty()) return true;
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
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool key(Json::string_t& k) {
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
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  enum Ctx : std::uint8_t { C_ROOT, C_MSG, C_DATA, C_TUR, C_CONTENT, C_BLOCK, C_INPUT, C_OTHER };
  enum Slot : std::uint8_t {
    S_NONE, S_TYPE, S_UUID, S_PARENT, S_SESSION, S_AGENT, S_SIDECHAIN, S_COMPACT, S_SUBTYPE, S_LOGICAL, S_PTU,
    S_DATA, S_MESSAGE, S_TUR, S_MSG_ID, S_CONTENT, S_DATA_AGENT, S_TUR_AGENT, S_B_TYPE, S_B_ID, S_B_TUID,
    S_B_INPUT, S_PROMPT, S_TOOL_USE_ID, S_HOOK_EVENT, S_HOOK_NAME, S_HOOK_COMMAND
  };
  struct Frame {
    Ctx ctx;
    Slot slot;
  };
  std::vector<Frame> stack_;

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

/// Pass 1. warn may be empty (scanning the main file for a subagent's link).
Skeleton scan(const std::string& path, const JsonlReader::Warn& warn, bool keep_bad,
              const std::optional<ResumePoint>& resume = std::nullopt) {
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
      });
  // SAX results of the records the reader parsed but next() has not returned yet (a glued line
  // parses all its records first), in order.
  std::deque<ScanSax> parsed;
  std::vector<ScanSax> spare;
  reader.set_parser([&](std::string_view text) {
    ScanSax h;
    if (!spare.empty()) {
      h = std::move(spare.back());
      spare.pop_back();
    }
    h.reset();
    if (!Json::sax_parse(text.begin(), text.end(), &h)) {
      spare.push_back(std::move(h));
      return false;
    }
    parsed.push_back(std::move(h));
    return true;
  });
  // Payload digest of a record, computed only when its uuid repeats (rare): the same digest the
  // store would compare, over the re-read record.
  auto payload = [&](std::uint64_t offset, std::uint64_t length, int part) {
    return dump_json(reader.read_at(offset, length, part));
  };
  if (resume) reader.start_at(resume->offset, resume->lines);
  JsonlRecord rec;
  while (reader.next(rec)) {
    ScanSax v = std::move(parsed.front());
    parsed.pop_front();
    struct Recycle {
      std::vector<ScanSax>& spare;
      ScanSax& v;
      ~Recycle() { spare.push_back(std::move(v)); }
    } recycle{spare, v};

    Line ln;
    ln.line = rec.line;
    ln.offset = rec.offset;
    ln.length = rec.length;
    ln.part = rec.part;
    if (rec.part > 0) {
      ln.glued = true;
      for (auto it = sk.lines.rbegin(); it != sk.lines.rend() && it->line == rec.line; ++it) it->glued = true;
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
    if (ln.type == sk.t_progress && v.data_object) {
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
      if (ln.type == sk.t_assistant) {
        ln.msg_id = sk.ids.intern(v.msg_id);
        if (v.content_array)
          for (std::size_t k = 0; k < v.n_blocks; ++k) {
            const ScanSax::Block& b = v.blocks[k];
            if (!b.object || b.type != "tool_use" || b.id.empty()) continue;
            Skeleton::put_first(sk.tool_use_line, sk.ids.intern(b.id), index);
            if (b.input_object && b.has_prompt) sk.task_prompts.emplace_back(b.prompt_hash, b.id);
          }
      } else {
        ln.compact_summary = v.compact_summary;
        if (v.content_array) {
          bool only = v.n_blocks > 0;
          ln.results = static_cast<std::uint32_t>(sk.result_pool.size());
          for (std::size_t k = 0; k < v.n_blocks; ++k) {
            const ScanSax::Block& b = v.blocks[k];
            if (b.object && b.type == "tool_result")
              sk.result_pool.push_back(sk.ids.intern(b.tool_use_id));
            else
              only = false;
          }
          ln.n_results = static_cast<std::uint32_t>(sk.result_pool.size()) - ln.results;
          ln.result_only = only;
        }
        if (v.tur_object && ln.n_results > 0 && !v.tur_agent.empty())
          sk.agent_tool_use.emplace(v.tur_agent, sk.str(sk.result_pool[ln.results]));
      }
    } else {
      ln.event = true;
      if (ln.type == sk.t_system && v.subtype == "compact_boundary") {
        ln.boundary = true;
        ln.logical_parent = sk.ids.intern(v.logical_parent);
      }
    }
    if (!ln.conflict) Skeleton::put_first(sk.by_uuid, ln.uuid, index);
    sk.lines.push_back(ln);
  }
  return sk;
}

int parent_line(const Skeleton& sk, int i) { return sk.line_of(sk.lines[i].parent); }

/// True for a user line holding only tool results (its content was checked in pass 1).
bool result_only(const Skeleton& sk, const Line& ln) { return ln.type == sk.t_user && ln.result_only; }

/// An earlier line of the streamed assistant message line i continues: consecutive chain lines
/// sharing message.id form one API message (FORMATS §1.4). The walk passes transparent events
/// and tool results, because Claude Code runs tools while the response still streams: a
/// message's later tool_use lines can hang off the result of an earlier one (seen in
/// agent-aac57f5: lines 29-31 continue message fsVEw3 after result line 28).
int merge_target(const Skeleton& sk, int i) {
  const Line& ln = sk.lines[i];
  if (ln.type != sk.t_assistant || ln.msg_id == 0 || ln.conflict) return -1;
  int a = parent_line(sk, i);
  std::size_t steps = 0;
  while (a >= 0 && a < i && (sk.lines[a].event || result_only(sk, sk.lines[a])) && steps++ < sk.lines.size())
    a = parent_line(sk, a);
  if (a < 0 || a >= i) return -1;
  const Line& p = sk.lines[a];
  if (p.type == sk.t_assistant && p.msg_id == ln.msg_id && p.sidechain == ln.sidechain && !p.conflict) return a;
  return -1;
}

enum class PlanKind : std::uint8_t { message, summary, event };

const char* kind_name(PlanKind k) {
  switch (k) {
    case PlanKind::summary: return kind::kSummary;
    case PlanKind::event: return kind::kEvent;
    default: return kind::kMessage;
  }
}

/// One node to write: its source lines, its predecessor and how it got there. Fixed size; the
/// rare extras (cycle report, covered plans, a renamed stored id) live in Importer side maps.
struct Plan {
  std::int32_t first = -1;  ///< first source line; the others follow Line::next, file order
  std::int32_t last = -1;   ///< last source line
  std::int32_t pred = -1;
  std::int32_t session = 0;
  std::int32_t boundary = -1;    ///< summary: the compact_boundary plan (or -1)
  std::int32_t cover_last = -1;  ///< summary: last covered plan (the logical parent)
  std::uint32_t missing_pred = 0;          ///< interned id, 0 none
  std::uint32_t cross_session_parent = 0;  ///< interned id, 0 none
  std::string stored_pred;  ///< resumed import: the predecessor is a node stored by an earlier run
  PlanKind kind = PlanKind::message;
  bool pred_changed = false;  ///< predecessor differs from the source's parentUuid
  bool emitted = false;
};

struct SessionSlot {
  SessionInfo info;
  int root_line = -1;
  bool begun = false;
};

std::string base64_clean_ok(const std::string& data) {
  if (data.empty()) return "empty base64 data";
  std::size_t n = 0;
  for (char c : data) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
              c == '=' || c == '-' || c == '_';
    if (c == '\n' || c == '\r' || c == ' ') continue;
    if (!ok) return "base64 data holds characters outside the alphabet";
    ++n;
  }
  if (n % 4 == 1) return "base64 data has an impossible length";
  return {};
}

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
  void emit(int p);
  void write(int p);
  Node build(int p);
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
  std::vector<Plan> plans_;
  std::unordered_map<int, std::vector<std::string>> cycle_;  // plan -> reported loop
  std::unordered_map<int, std::vector<int>> covers_;         // summary plan -> covered plans
  std::unordered_map<int, std::string> renamed_;             // plan -> stored id when not its uuid
  std::vector<int> node_of_;  // line -> plan
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
  std::optional<ResumePoint> resume_;  ///< set: read from there, earlier records are stored
};

std::string Importer::raw_bytes(const Line& ln) {
  if (!raw_.is_open()) raw_.open(path_, std::ios::binary);
  raw_.clear();
  raw_.seekg(static_cast<std::streamoff>(ln.offset));
  std::string bytes(ln.length, '\0');
  raw_.read(bytes.data(), static_cast<std::streamsize>(ln.length));
  bytes.resize(static_cast<std::size_t>(raw_.gcount()));
  if (!bytes.empty() && bytes.back() == '\r') bytes.pop_back();
  bytes.erase(std::remove(bytes.begin(), bytes.end(), '\0'), bytes.end());
  return utf8_sanitize(bytes);
}

std::string Importer::parent_node_of_tool_use(const Skeleton& sk, const std::string& tool_use_id) const {
  // Looked up without interning (sk may be a const scan of another file).
  int i = -1;
  for (std::uint32_t id = 1; id < sk.tool_use_line.size(); ++id)
    if (sk.tool_use_line[id] >= 0 && sk.ids.view(id) == tool_use_id) {
      i = sk.tool_use_line[id];
      break;
    }
  if (i < 0) return {};
  std::size_t steps = 0;
  for (int t = merge_target(sk, i); t >= 0 && steps++ < sk.lines.size(); t = merge_target(sk, i)) i = t;
  return sk.str(sk.lines[i].uuid);
}

std::string Importer::root_text_hash(int line) {
  // sha256 of a user line's string content (sidechain root matching), re-read on demand: only
  // sidechain roots need it.
  const Line& ln = sk_.lines[line];
  if (ln.type != sk_.t_user || ln.kind != LineKind::node) return {};
  Json v = reader_->read_at(ln.offset, ln.length, ln.part);
  if (!v.is_object() || !is_obj(v, "message")) return {};
  const Json& msg = v["message"];
  auto c = msg.find("content");
  if (c == msg.end() || !c->is_string()) return {};
  return sha256_hex(c->get<std::string>());
}

void Importer::setup_sessions() {
  fs::path p(path_);
  stem_ = p.stem().string();
  // Large tool outputs (CC >= 2.1.2) live in <session dir>/tool-results/<tool_use_id>.txt; a
  // sub-agent file shares its main session's folder.
  results_dir_ = p.parent_path().filename() == "subagents" ? p.parent_path().parent_path() / "tool-results"
                                                           : p.parent_path() / stem_ / "tool-results";
  base_ = p.filename().string();
  std::string dir = p.parent_path().filename().string();
  bool agent_name = stem_.rfind("agent-", 0) == 0;
  subagent_ = dir == "subagents" || (agent_name && !sk_.lines.empty() && !sk_.first_agent_id.empty());

  SessionSlot main;
  main.info.format = kFormat;
  main.info.source = sink_.file();
  if (subagent_) {
    std::string main_stem;
    fs::path main_file;
    if (dir == "subagents") {
      main_stem = p.parent_path().parent_path().filename().string();
      main_file = p.parent_path().parent_path().parent_path() / (main_stem + ".jsonl");
    } else {
      main_stem = sk_.inner_session.empty() ? stem_ : sk_.inner_session;
      main_file = p.parent_path() / (main_stem + ".jsonl");
    }
    std::string agent_id = stem_.substr(6);
    main.info.id = main_stem + "/" + stem_;
    main.info.kind = "sidechain";
    main.info.parent_session = main_stem;
    main.info.metadata["agent_id"] = agent_id;
    if (agent_id.rfind("acompact-", 0) == 0) main.info.metadata["compaction_worker"] = true;
    std::error_code ec;
    // A resumed import continues a session the first run linked already: the main file is not
    // scanned again (the stored session keeps its parent).
    if (!(resume_ && sink_.store().session(main.info.id)) && fs::exists(main_file, ec)) {
      Skeleton msk = scan(main_file.string(), {}, false);
      auto it = msk.agent_tool_use.find(agent_id);
      if (it != msk.agent_tool_use.end()) {
        std::string node = parent_node_of_tool_use(msk, it->second);
        if (!node.empty()) {
          main.info.parent_node = node;
          main.info.metadata["tool_use_id"] = it->second;
        }
      }
    }
  } else {
    main.info.id = stem_;
    main.info.kind = "main";
  }
  if (!sk_.inner_session.empty() && sk_.inner_session != main.info.id && !subagent_)
    main.info.metadata["inner_session_id"] = sk_.inner_session;
  if (subagent_ && !sk_.inner_session.empty()) main.info.metadata["inner_session_id"] = sk_.inner_session;
  sessions_.push_back(std::move(main));

  // Inline 1.0.x sidechains: isSidechain roots inside a main file, one session per root.
  session_of_line_.assign(sk_.lines.size(), 0);
  if (subagent_) return;
  std::map<int, int> session_of_root;
  std::unordered_map<std::string, std::vector<std::string>> prompts;  // hash -> tool_use ids, file order
  for (const auto& [hash, id] : sk_.task_prompts) prompts[hash].push_back(id);
  std::unordered_set<std::string> used_calls;
  std::vector<int> memo(sk_.lines.size(), -2);
  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind != LineKind::node || !ln.sidechain) continue;
    // Walk to the sidechain root (bounded: a cycle ends the walk).
    std::vector<int> path{i};
    int root = i;
    std::size_t steps = 0;
    while (memo[root] == -2 && steps++ < sk_.lines.size()) {
      int par = parent_line(sk_, root);
      if (par < 0 || !sk_.lines[par].sidechain || std::find(path.begin(), path.end(), par) != path.end()) break;
      root = par;
      path.push_back(root);
    }
    int r = memo[root] >= 0 ? memo[root] : root;
    for (int k : path) memo[k] = r;
    auto it = session_of_root.find(r);
    if (it == session_of_root.end()) {
      SessionSlot s;
      s.root_line = r;
      const std::string root_uuid = sk_.str(sk_.lines[r].uuid);
      s.info.id = stem_ + "/sidechain-" + root_uuid.substr(0, 8);
      s.info.kind = "sidechain";
      s.info.parent_session = stem_;
      s.info.format = kFormat;
      s.info.source = sink_.file();
      s.info.metadata["root"] = root_uuid;
      if (std::string text_hash = prompts.empty() ? std::string() : root_text_hash(r); !text_hash.empty()) {
        auto pit = prompts.find(text_hash);
        if (pit != prompts.end()) {
          for (const auto& call : pit->second) {
            if (used_calls.count(call)) continue;
            used_calls.insert(call);
            s.info.parent_node = parent_node_of_tool_use(sk_, call);
            s.info.metadata["tool_use_id"] = call;
            s.info.metadata["link"] = "prompt";
            break;
          }
        }
      }
      sessions_.push_back(std::move(s));
      it = session_of_root.emplace(r, static_cast<int>(sessions_.size()) - 1).first;
    }
    session_of_line_[i] = it->second;
  }
}

/// Resumed import: what only a whole-file read plans right (FORMATS §1.5, §1.6): a parent not
/// found (so attached to the record before it), a compaction (its covered chain lies before the
/// resume point) or an inline 1.0.x sidechain (its root may). Throws kResumeUnsafe.
void Importer::check_resumable() const {
  if (!resume_) return;
  for (const Plan& p : plans_)
    if (p.missing_pred)
      throw Error(Exit::bad_input, kResumeUnsafe, "a record names a parent written neither before nor after");
  for (const Line& ln : sk_.lines) {
    if (ln.boundary || ln.compact_summary)
      throw Error(Exit::bad_input, kResumeUnsafe, "a compaction after the resume point");
    if (ln.sidechain && !subagent_)
      throw Error(Exit::bad_input, kResumeUnsafe, "an inline sidechain after the resume point");
  }
}

std::string Importer::stored_node_of_uuid(const std::string& uuid, const std::string& session) {
  if (auto n = sink_.store().node(uuid, false)) return n->session == session ? uuid : std::string();
  // A streamed line merged into the node of its message's first line (source.parts[].record.uuid);
  // an appended record names one of the last lines written, so only the newest nodes are searched.
  auto& q = sink_.store().db().cached(
      "SELECT n.id FROM (SELECT id, metadata FROM nodes WHERE session=?1 ORDER BY seq DESC LIMIT 256) n, "
      "json_each(n.metadata, '$.source.parts') p WHERE json_extract(p.value, '$.record.uuid') = ?2 LIMIT 1");
  ResetOnExit r(q);
  q.bind(1, session).bind(2, uuid);
  return q.step() ? q.text(0) : std::string();
}

std::string Importer::stored_message_id(const std::string& id) {
  auto n = sink_.store().node(id, false);
  return n && n->role == role::kAssistant ? json_str(n->metadata, "message_id") : std::string();
}

/// The end of the stored chain of tool results linearized under a stored assistant step (the
/// step itself when it has none yet): where a resumed result continues (linearize_results).
std::string Importer::stored_results_end(const std::string& step) {
  std::string cur = step;
  for (int guard = 0; guard < 10000; ++guard) {
    std::string next;
    for (const std::string& c : sink_.store().children(cur))
      if (auto n = sink_.store().node(c, false); n && n->role == role::kTool) next = c;
    if (next.empty()) break;
    cur = std::move(next);
  }
  return cur;
}

void Importer::plan_nodes() {
  node_of_.assign(sk_.lines.size(), -1);
  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind != LineKind::node) continue;
    int t = merge_target(sk_, i);
    if (t >= 0 && node_of_[t] >= 0 && session_of_line_[t] == session_of_line_[i]) {
      node_of_[i] = node_of_[t];
      Plan& into = plans_[node_of_[t]];
      sk_.lines[into.last].next = i;
      into.last = i;
      continue;
    }
    Plan p;
    p.first = p.last = i;
    p.session = session_of_line_[i];
    p.kind = ln.event ? PlanKind::event : PlanKind::message;
    node_of_[i] = static_cast<int>(plans_.size());
    plans_.push_back(std::move(p));
  }
  // Predecessors from the source links.
  for (auto& p : plans_) {
    const Line& ln = sk_.lines[p.first];
    std::uint32_t named = ln.parent;
    if (ln.boundary && named == 0) {
      // A compaction boundary restarts the chain; its logical parent keeps the raw chain whole.
      named = ln.logical_parent;
      if (named != 0) p.pred_changed = true;
    }
    if (named == 0) continue;
    int named_line = sk_.line_of(named);
    if (named_line < 0 && resume_) {
      // Resumed import: a parent written before the resume point is a node of an earlier run
      // (or a line merged into one); in this session it is the predecessor.
      std::string stored = stored_node_of_uuid(sk_.str(named), sessions_[p.session].info.id);
      if (!stored.empty()) {
        const Line& first = sk_.lines[p.first];
        if (first.type == sk_.t_assistant && stored_message_id(stored) == sk_.str(first.msg_id))
          throw Error(Exit::bad_input, kResumeUnsafe, "a streamed message continues across the resume point");
        // (a merged line's uuid resolves to its node: the same predecessor a whole read gives)
        p.stored_pred = std::move(stored);
        continue;
      }
    }
    if (named_line < 0 && sink_.has(sk_.str(named))) {
      // A sub-agent or compaction-worker file names a record of the main file (imported first,
      // FORMATS.md "Dangling parents"): a link to another session, not a missing parent.
      p.cross_session_parent = named;
      continue;
    }
    if (named_line < 0) {
      p.missing_pred = named;
      continue;
    }
    int q = node_of_[named_line];
    if (q < 0) continue;
    if (plans_[q].session != p.session) {
      p.cross_session_parent = named;
      continue;
    }
    p.pred = q;
  }
  attach_missing_parents();
}

// FIELD_CASES C10: a record whose parent the file never wrote. The first record of a session
// (an excerpt, a resumed file) stays a root. A record further down is attached to the record
// written just before it in the same session: Claude Code appends in conversation order, so that
// is the best witness of where it belongs, and render then still reaches the summary before it
// and everything after it. Either way metadata.missing_predecessor keeps the named id.
void Importer::attach_missing_parents() {
  std::vector<int> last_of_session;
  for (int i = 0; i < static_cast<int>(plans_.size()); ++i) {
    Plan& p = plans_[i];
    const std::size_t slot = static_cast<std::size_t>(p.session);
    if (last_of_session.size() <= slot) last_of_session.resize(slot + 1, -1);
    const int before = last_of_session[slot];
    last_of_session[slot] = i;
    if (!p.missing_pred) continue;
    const Line& ln = sk_.lines[p.first];
    bool reaches_self = false;  // attaching must not close a cycle through a forward link
    for (int q = before, steps = 0; q >= 0 && steps <= static_cast<int>(plans_.size()); q = plans_[q].pred, ++steps)
      if (q == i) reaches_self = true;
    if (before < 0 || reaches_self) {
      sink_.warn(ln.line, "parent.missing",
                 fmt::format("record '{}' names parent '{}', which this file never wrote; kept as a root",
                             sk_.ids.view(ln.uuid), sk_.ids.view(p.missing_pred)));
      continue;
    }
    p.pred = before;
    p.pred_changed = true;
    sink_.warn(ln.line, "parent.missing",
               fmt::format("record '{}' names parent '{}', which this file never wrote; attached to the record "
                           "written before it ('{}')",
                           sk_.ids.view(ln.uuid), sk_.ids.view(p.missing_pred), plan_id(before)));
  }
}

void Importer::break_cycles() {
  const int n = static_cast<int>(plans_.size());
  // FIELD_CASES C23: a record rewritten under an existing uuid whose parent chain reaches that
  // uuid. By id the parent links loop (a -> b -> a); by record they do not: the rewrite is stored
  // under a new id (ImportSink::add, id.duplicate_conflict) after its parent, so it keeps the link
  // and HEAD's chain holds every record. The loop the ids would form is reported, with the line
  // of the duplicate and of the record whose id it reuses.
  for (int p = 0; p < n; ++p) {
    const Line& ln = sk_.lines[plans_[p].first];
    if (!ln.conflict || plans_[p].pred < 0 || cycle_.count(p)) continue;  // (reported by the first call)
    std::vector<std::string> ids{sk_.str(ln.uuid)};
    int q = plans_[p].pred;
    for (int steps = 0; q >= 0 && steps <= n; ++steps) {
      ids.push_back(plan_id(q));
      if (first_line(q).uuid == ln.uuid) {
        std::string joined;
        for (const auto& s : ids) joined += (joined.empty() ? "" : " -> ") + s;
        sink_.warn(ln.line, "cycle",
                   fmt::format("record '{}' reuses the id of line {} and its parent links would loop: {}; "
                               "stored under a new id after '{}', so the chain keeps every record",
                               sk_.str(ln.uuid), first_line(q).line, joined,
                               plan_id(plans_[p].pred)));
        cycle_[p] = ids;
        break;
      }
      q = plans_[q].pred;
    }
  }
  // General cycles in the predecessor function graph: break each at its earliest record.
  std::vector<std::uint8_t> state(n, 0);
  for (int s = 0; s < n; ++s) {
    if (state[s]) continue;
    std::vector<int> path;
    int v = s;
    while (v >= 0 && state[v] == 0) {
      state[v] = 1;
      path.push_back(v);
      v = plans_[v].pred;
    }
    if (v >= 0 && state[v] == 1) {
      auto start = std::find(path.begin(), path.end(), v);
      std::vector<int> cyc(start, path.end());
      int first = *std::min_element(cyc.begin(), cyc.end());
      std::vector<std::string> ids;
      for (int c : cyc) ids.push_back(plan_id(c));
      ids.push_back(plan_id(cyc.front()));
      std::string joined;
      for (const auto& id : ids) joined += (joined.empty() ? "" : " -> ") + id;
      sink_.warn(first_line(first).line, "cycle",
                 fmt::format("parent links loop: {}; '{}' kept as a root", joined, plan_id(first)));
      cycle_[first] = ids;
      plans_[first].pred = -1;
      plans_[first].pred_changed = true;
    }
    for (int k : path) state[k] = 2;
  }
}

void Importer::linearize_results() {
  // Parallel tool calls (2.1.x): every result hangs off the assistant message and the
  // conversation continues from the last one. Chain them so the spine meets each (FORMATS §1.5).
  std::unordered_map<int, int> last_result;                            // step -> last result plan
  std::unordered_map<int, std::unordered_set<std::uint32_t>> answered;  // step -> answered tool ids
  std::unordered_map<std::string, int> last_stored_result;  // resumed: stored step -> last result plan
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    Plan& pl = plans_[p];
    const Line& ln = sk_.lines[pl.first];
    if (pl.kind != PlanKind::message || ln.type != sk_.t_user || ln.n_results == 0) continue;
    if (pl.pred < 0 && !pl.stored_pred.empty() && !stored_message_id(pl.stored_pred).empty()) {
      // Resumed: the step was stored by the earlier run; continue after its stored results, then
      // after this run's.
      const std::string step = pl.stored_pred;
      auto it = last_stored_result.find(step);
      if (it != last_stored_result.end()) {
        pl.stored_pred.clear();
        pl.pred = it->second;
      } else {
        pl.stored_pred = stored_results_end(step);
      }
      if (pl.stored_pred != step) pl.pred_changed = true;
      last_stored_result[step] = p;
      continue;
    }
    if (pl.pred < 0) continue;
    int step = pl.pred;
    if (first_line(step).type != sk_.t_assistant) continue;
    auto& seen = answered[step];
    const std::uint32_t* ids = sk_.result_pool.data() + ln.results;
    bool again = false;
    for (std::uint32_t k = 0; k < ln.n_results; ++k)
      if (seen.count(ids[k])) again = true;
    if (again) continue;  // the same call answered on another branch: a real branch, leave it
    for (std::uint32_t k = 0; k < ln.n_results; ++k) seen.insert(ids[k]);
    auto it = last_result.find(step);
    if (it != last_result.end()) {
      pl.pred = it->second;
      pl.pred_changed = true;
    }
    last_result[step] = p;
  }
}

// Claude Code 2.1.x sends the model <system-reminder> user messages that it does not write to the
// session file: hook output ("PostToolUse:Edit hook additional context: ...", "PreToolUse:Bash hook
// blocking error from command: ..."). An auto-compaction worker replays the conversation it
// summarises and writes them: isMeta user records whose parentUuid is the main-file record they
// followed (seen: auto_compaction_v2.1_full/fa812bfe.../subagents/agent-acompact-70d8e7.jsonl lines
// 1-13, after main lines 827-1550; the main file has none of them). They are spliced into the
// main chain after that record, as the model saw them: the record's children continue from the
// reminder. A reminder whose parent is an assistant line (a PreToolUse hook fires before the
// tool's result exists) goes after the results answering that line, so a tool_use still meets its
// result next. The reminder keeps its uuid with "~main" appended (the worker's own import keeps
// the uuid).
void Importer::inject_worker_reminders() {
  if (resume_) {
    // Resumed: reminders the earlier run spliced after a stored node ("<uuid>~main" children)
    // come before what continues from it, as in a whole read.
    for (Plan& pl : plans_) {
      if (pl.stored_pred.empty()) continue;
      for (int guard = 0; guard < 10000; ++guard) {
        std::string next;
        for (const std::string& c : sink_.store().children(pl.stored_pred))
          if (c.size() > 5 && c.compare(c.size() - 5, 5, "~main") == 0) next = c;
        if (next.empty()) break;
        pl.stored_pred = std::move(next);
        pl.pred_changed = true;
      }
    }
  }
  if (subagent_) return;
  std::vector<std::string> workers;
  for (const auto& f : claude_code_subagent_files(path_))
    if (fs::path(f).filename().string().rfind("agent-acompact-", 0) == 0) workers.push_back(f);
  if (workers.empty()) return;
  const fs::path dir = fs::path(path_).parent_path();
  auto result_child = [&](int at) {
    for (int r = 0; r < static_cast<int>(plans_.size()); ++r)
      if (plans_[r].pred == at && plans_[r].kind == PlanKind::message && plans_[r].session == plans_[at].session &&
          result_only(sk_, first_line(r)))
        return r;
    return -1;
  };
  std::unordered_map<int, int> tail;  // splice point -> the last reminder spliced after it
  for (const auto& w : workers) {
    std::ifstream in(w, std::ios::binary);
    std::string text;
    std::int64_t lineno = 0;
    while (std::getline(in, text)) {
      ++lineno;
      Json v = Json::parse(text, nullptr, false);
      if (!v.is_object() || str_at(v, "type") != "user") continue;
      auto meta = v.find("isMeta");
      if (meta == v.end() || !meta->is_boolean() || !meta->get<bool>()) continue;
      if (!is_obj(v, "message")) continue;
      auto c = v["message"].find("content");
      if (c == v["message"].end() || !(c->is_string() || c->is_array())) continue;
      const std::string uuid = str_at(v, "uuid"), parent = str_at(v, "parentUuid");
      if (uuid.empty() || parent.empty() || sk_.line_of(sk_.ids.intern(uuid)) >= 0) continue;
      const int pline = sk_.line_of(sk_.ids.intern(parent));
      if (pline < 0 || node_of_[pline] < 0) continue;
      int q = node_of_[pline];
      if (plans_[q].kind != PlanKind::message) continue;
      if (first_line(q).type == sk_.t_assistant) {
        if (c->is_string() && c->get_ref<const std::string&>().find(" hook blocking error from command: ") !=
                                  std::string::npos) {
          // The blocking error of this message's tool call is recorded: no estimate for it.
          std::unordered_set<int> lines;
          for (int li = plans_[q].first; li >= 0; li = sk_.lines[li].next) lines.insert(li);
          for (std::uint32_t id = 1; id < sk_.tool_use_line.size(); ++id)
            if (lines.count(sk_.tool_use_line[id])) block_recorded_.insert(id);
        }
        for (int r = result_child(q); r >= 0; r = result_child(q)) q = r;
      }
      for (auto t = tail.find(q); t != tail.end(); t = tail.find(q)) q = t->second;
      Line ln;
      ln.line = lineno;
      ln.kind = LineKind::node;
      ln.type = sk_.t_user;
      ln.injected = true;
      ln.offset = injected_.size();
      ln.uuid = sk_.ids.intern(uuid + "~main");
      ln.parent = sk_.ids.intern(parent);
      const int np = static_cast<int>(plans_.size());
      for (auto& other : plans_)
        if (other.pred == q && other.session == plans_[q].session) {
          other.pred = np;
          other.pred_changed = true;
        }
      Plan pl;
      pl.first = pl.last = static_cast<std::int32_t>(sk_.lines.size());
      pl.session = plans_[q].session;
      pl.pred = q;
      pl.pred_changed = true;
      plans_.push_back(pl);
      sk_.lines.push_back(ln);
      node_of_.push_back(np);
      session_of_line_.push_back(pl.session);
      injected_.push_back(Injected{std::move(v), fs::path(w).lexically_relative(dir).generic_string(), lineno});
      tail[q] = np;
    }
  }
}

void Importer::plan_compactions() {
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    Plan& pl = plans_[p];
    const Line& ln = sk_.lines[pl.first];
    if (!ln.compact_summary || pl.kind != PlanKind::message) continue;
    int anchor = -1;
    int last = -1;
    int q = pl.pred;
    if (q >= 0 && first_line(q).boundary) {
      if (plans_[q].pred >= 0) {
        anchor = q;
        last = plans_[q].pred;
      }
    } else if (q >= 0) {
      anchor = q;
      last = q;
    }
    if (last < 0) {
      sink_.warn(ln.line, "summary.uncovered",
                 fmt::format("compact summary '{}' has no logical parent in this file; kept as a message",
                             sk_.ids.view(ln.uuid)));
      continue;
    }
    pl.kind = PlanKind::summary;
    pl.boundary = first_line(q).boundary ? q : -1;
    pl.cover_last = last;
    for (auto& other : plans_)
      if (other.pred == p) {
        other.pred = anchor;
        other.pred_changed = true;
      }
  }
}

void Importer::compute_covers() {
  const int n = static_cast<int>(plans_.size());
  for (int p = 0; p < n; ++p) {
    Plan& pl = plans_[p];
    if (pl.kind != PlanKind::summary) continue;
    std::vector<int> chain;
    int q = pl.cover_last;
    for (int steps = 0; q >= 0 && steps <= n; ++steps) {
      if (plans_[q].kind == PlanKind::summary) break;  // never cover a summary id
      chain.push_back(q);
      q = plans_[q].pred;
    }
    std::reverse(chain.begin(), chain.end());
    pl.pred = chain.empty() ? -1 : plans_[chain.front()].pred;
    if (chain.empty()) {
      covers_.erase(p);
      pl.kind = PlanKind::message;
      sink_.warn(sk_.lines[pl.first].line, "summary.uncovered",
                 fmt::format("compact summary '{}' covers nothing; kept as a message", plan_id(p)));
    } else {
      covers_[p] = std::move(chain);
    }
  }
}

void Importer::begin(int s) {
  SessionSlot& slot = sessions_[s];
  if (slot.begun) return;
  if (s != 0) begin(0);
  sink_.begin_session(slot.info);
  slot.begun = true;
}

Json Importer::convert_image(const Json& b, std::int64_t line) {
  Json out = Json::object();
  out["type"] = "image";
  const Json* src = is_obj(b, "source") ? &b["source"] : nullptr;
  std::string stype = src ? str_at(*src, "type") : "";
  if (src && stype == "base64") {
    out["media_type"] = str_at(*src, "media_type");
    std::string data = str_at(*src, "data");
    std::string why = base64_clean_ok(data);
    std::optional<ImageDims> dims;
    if (why.empty()) {
      dims = image_dimensions_base64(data);
      if (!dims && data.size() < 16) why = "base64 data too short for an image header";
    }
    out["data"] = std::move(data);
    if (dims) {
      out["width"] = dims->width;
      out["height"] = dims->height;
    }
    if (!why.empty()) sink_.warn(line, "image.undecodable", fmt::format("image block kept undecoded: {}", why));
    return out;
  }
  if (src && stype == "url") {
    if (src->contains("media_type")) out["media_type"] = str_at(*src, "media_type");
    out["ref"] = str_at(*src, "url");
    return out;
  }
  if (src && stype == "file") {
    out["ref"] = "file:" + str_at(*src, "file_id");
    return out;
  }
  sink_.warn(line, "image.undecodable", "image block without a readable source kept as opaque");
  return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
}

Json Importer::convert_block(const Json& b, std::int64_t line, Json& extras, std::size_t index) {
  if (!b.is_object()) return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
  std::string type = str_at(b, "type");
  Json out = Json::object();
  std::set<std::string> used{"type"};
  if (type == "text") {
    out["type"] = "text";
    out["text"] = str_at(b, "text");
    used.insert("text");
  } else if (type == "thinking") {
    out["type"] = "thinking";
    out["thinking"] = str_at(b, "thinking");
    if (b.contains("signature")) out["signature"] = str_at(b, "signature");
    used.insert({"thinking", "signature"});
  } else if (type == "tool_use") {
    out["type"] = "tool_use";
    out["id"] = str_at(b, "id");
    out["name"] = str_at(b, "name");
    out["input"] = b.contains("input") ? b["input"] : Json::object();
    used.insert({"id", "name", "input"});
  } else if (type == "tool_result") {
    out["type"] = "tool_result";
    out["tool_use_id"] = str_at(b, "tool_use_id");
    Json content = b.contains("content") ? b["content"] : Json("");
    if (content.is_array()) {
      Json conv = Json::array();
      Json inner_extras = Json::array();
      for (std::size_t k = 0; k < content.size(); ++k) conv.push_back(convert_block(content[k], line, inner_extras, k));
      if (!inner_extras.empty()) {
        Json e = Json::object();
        e["index"] = index;
        e["content"] = std::move(inner_extras);
        extras.push_back(std::move(e));
      }
      content = std::move(conv);
    } else if (content.is_null()) {
      content = "";
    } else if (!content.is_string()) {
      content = dump_json(content);
    }
    out["content"] = std::move(content);
    out["is_error"] = b.value("is_error", false) == true;
    used.insert({"tool_use_id", "content", "is_error"});
  } else if (type == "image") {
    out = convert_image(b, line);
    used.insert("source");
  } else {
    return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
  }
  Json rest = Json::object();
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!used.count(it.key())) rest[it.key()] = it.value();
  if (!rest.empty()) {
    Json e = Json::object();
    e["index"] = index;
    e["fields"] = std::move(rest);
    extras.push_back(std::move(e));
  }
  return out;
}

// A tool call a PreToolUse hook blocked: its PreToolUse hooks ran, no PostToolUse or
// PostToolUseFailure hook did (the tool never ran; a failing tool still runs the Failure hooks:
// fa812bfe lines 401, 494, 639...), and its result is an error whose toolUseResult is "Error: "
// and the hook's stderr. Claude Code 2.1.x then sends that stderr twice: as the tool_result and as
// a <system-reminder> "PreToolUse:<tool> hook blocking error from command: "<command>": <stderr>"
// that the session file does not hold (the compaction worker of fa812bfe records it for main line
// 1358: agent-acompact-70d8e7.jsonl line 8). metadata.hook_blocked names such calls, their hook
// and the PreToolUse commands (which one blocked is not recorded), unless a spliced worker record
// holds the reminder; the estimator counts the reminder (tokens/estimate.hpp).
void Importer::note_hook_blocked(const Json& content, const Json& record, Json& meta) {
  auto tur = record.find("toolUseResult");
  if (tur == record.end() || !tur->is_string() || tur->get_ref<const std::string&>().rfind("Error: ", 0) != 0) return;
  for (const auto& b : content) {
    if (!b.is_object() || str_at(b, "type") != "tool_result") continue;
    auto err = b.find("is_error");
    if (err == b.end() || !err->is_boolean() || !err->get<bool>()) continue;
    const std::uint32_t id = sk_.ids.intern(str_at(b, "tool_use_id"));
    auto h = sk_.hooks.find(id);
    if (h == sk_.hooks.end() || h->second.pre_commands.empty() || h->second.post > 0 || block_recorded_.count(id))
      continue;
    if (!meta.contains("hook_blocked")) meta["hook_blocked"] = Json::array();
    meta["hook_blocked"].push_back(Json{{"tool_use_id", str_at(b, "tool_use_id")},
                                        {"hook", h->second.pre_name},
                                        {"commands", h->second.pre_commands}});
  }
}

/// Tool outputs Claude Code stored beside the session instead of inline (a tool_result whose
/// text starts "<persisted-output>": a notice and a preview are what the model saw): the file
/// <session dir>/tool-results/<tool_use_id>.txt is read into metadata.persisted_outputs
/// [{tool_use_id, file, bytes, text}] so the archive keeps it after Claude Code deletes it; the
/// content stays as the model saw it. A file that is gone is listed with "missing": true.
Json Importer::persisted_outputs(const Json& content) {
  Json out = Json::array();
  if (!content.is_array()) return out;
  for (const auto& b : content) {
    if (!b.is_object() || str_at(b, "type") != "tool_result") continue;
    const Json& c = b.contains("content") ? b["content"] : Json();
    bool persisted = false;
    if (c.is_string()) persisted = c.get_ref<const std::string&>().rfind("<persisted-output>", 0) == 0;
    else if (c.is_array())
      for (const auto& x : c)
        if (x.is_object() && x.contains("text") && x["text"].is_string() &&
            x["text"].get_ref<const std::string&>().rfind("<persisted-output>", 0) == 0)
          persisted = true;
    if (!persisted) continue;
    const std::string id = str_at(b, "tool_use_id");
    if (id.empty() || id.find('/') != std::string::npos) continue;
    const fs::path file = results_dir_ / (id + ".txt");
    Json e{{"tool_use_id", id}, {"file", (fs::path("tool-results") / file.filename()).string()}};
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      e["missing"] = true;
    } else {
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      e["bytes"] = static_cast<std::int64_t>(text.size());
      e["text"] = utf8_sanitize(text);
    }
    out.push_back(std::move(e));
  }
  return out;
}

Node Importer::build(int p) {
  const Plan& pl = plans_[p];
  Node n;
  n.id = plan_id(p);
  n.session = sessions_[pl.session].info.id;
  n.kind = kind_name(pl.kind);
  const Line& first = sk_.lines[pl.first];

  Json source = Json::object();
  source["format"] = kFormat;
  source["file"] = first.injected ? injected_[first.offset].file : base_;
  source["line"] = first.line;
  if (first.glued) source["part"] = first.part;
  source["uuid"] = sk_.str(first.uuid);
  Json meta = Json::object();
  meta["source"] = source;

  Json content = Json::array();
  Json extras = Json::array();
  Json parts = Json::array();
  bool any_result = false;
  bool all_result = true;
  Json usage;
  std::string stop_reason;

  for (int li = pl.first; li >= 0; li = sk_.lines[li].next) {
    const Line& ln = sk_.lines[li];
    const std::string_view ln_type = sk_.ids.view(ln.type);
    Json v = ln.injected ? injected_[ln.offset].record : reader_->read_at(ln.offset, ln.length, ln.part);
    if (!v.is_object()) v = Json::object();
    if (parts.empty()) {
      if (v.contains("timestamp")) meta["timestamp"] = v["timestamp"];
    }
    if (n.kind == kind::kEvent) {
      std::string sub = str_at(v, "subtype");
      if (sub.empty() && is_obj(v, "data")) sub = str_at(v["data"], "type");
      meta["event"] = sub.empty() ? std::string(ln_type) : fmt::format("{}/{}", ln_type, sub);
      if (ln.type == sk_.t_system) {
        auto c = v.find("content");
        if (c != v.end() && c->is_string() && !c->get<std::string>().empty())
          content.push_back(Json{{"type", "text"}, {"text", c->get<std::string>()}});
      }
      if (ln.boundary) {
        meta["logical_parent"] = ln.logical_parent == 0 ? Json(nullptr) : Json(sk_.str(ln.logical_parent));
        if (is_obj(v, "compactMetadata")) meta["compact"] = v["compactMetadata"];
      }
      meta["raw"] = std::move(v);
      continue;
    }
    static const Json kNull;
    auto mit = v.find("message");
    const Json& msg = mit == v.end() ? kNull : *mit;
    const Json* c = msg.is_object() && msg.contains("content") ? &msg["content"] : nullptr;
    if (c && c->is_string()) {
      content.push_back(Json{{"type", "text"}, {"text", c->get<std::string>()}});
      all_result = false;
    } else if (c && c->is_array()) {
      for (const auto& b : *c) {
        bool is_result = b.is_object() && str_at(b, "type") == "tool_result";
        any_result = any_result || is_result;
        all_result = all_result && is_result;
        content.push_back(convert_block(b, ln.line, extras, content.size()));
      }
    } else if (c && !c->is_null()) {
      content.push_back(Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", *c}});
      all_result = false;
    }
    if (ln.type == sk_.t_assistant) {
      if (msg.contains("usage")) usage = msg["usage"];
      std::string sr = str_at(msg, "stop_reason");
      if (!sr.empty()) stop_reason = sr;
      if (!meta.contains("model") && msg.contains("model")) meta["model"] = msg["model"];
      if (!meta.contains("message_id")) meta["message_id"] = sk_.str(ln.msg_id);
      if (!meta.contains("request_id") && v.contains("requestId")) meta["request_id"] = v["requestId"];
    }
    if (v.value("isMeta", false) == true) meta["is_meta"] = true;
    if (v.value("isSidechain", false) == true) meta["is_sidechain"] = true;
    if (v.contains("agentId")) meta["agent_id"] = v["agentId"];
    if (ln.injected) meta["spliced_from_worker"] = true;
    if (c && c->is_array() && ln.type == sk_.t_user) note_hook_blocked(*c, v, meta);
    if (v.contains("toolUseResult")) {
      meta["tool_use_result"] = v["toolUseResult"];
      v.erase("toolUseResult");
    }
    Json env = std::move(v);
    if (env["message"].is_object()) env["message"].erase("content");
    Json part = Json::object();
    part["line"] = ln.line;
    if (ln.glued) part["part"] = ln.part;
    part["record"] = std::move(env);
    parts.push_back(std::move(part));
  }

  if (n.kind != kind::kEvent) {
    meta["source"]["parts"] = std::move(parts);
    if (first.type == sk_.t_assistant) {
      n.role = role::kAssistant;
      if (!usage.is_null()) meta["usage"] = usage;
      if (!stop_reason.empty()) meta["stop_reason"] = stop_reason;
    } else {
      n.role = any_result && all_result && !content.empty() ? role::kTool : role::kUser;
    }
    if (!extras.empty()) meta["block_extras"] = std::move(extras);
    if (Json kept = persisted_outputs(content); !kept.empty()) meta["persisted_outputs"] = std::move(kept);
  }

  if (pl.kind == PlanKind::summary) {
    Json summary = Json::object();
    summary["strategy"] = "rolling";
    summary["origin"] = "import";
    summary["format"] = kFormat;
    if (pl.boundary >= 0) {
      const Line& b = first_line(pl.boundary);
      Json bv = reader_->read_at(b.offset, b.length, b.part);
      Json cm = is_obj(bv, "compactMetadata") ? bv["compactMetadata"] : Json::object();
      summary["trigger"] = cm.contains("trigger") ? cm["trigger"] : Json(nullptr);
      summary["preTokens"] = cm.contains("preTokens") ? cm["preTokens"] : Json(nullptr);
      summary["compact_metadata"] = cm;
      summary["boundary"] = sk_.str(b.uuid);
    }
    summary["logical_parent"] = plan_id(pl.cover_last);
    for (auto it = meta.begin(); it != meta.end(); ++it) summary[it.key()] = it.value();
    meta = std::move(summary);
    meta["is_compact_summary"] = true;
  }

  if (pl.pred_changed || pl.kind == PlanKind::summary)
    meta["source_parent"] = first.parent == 0 ? Json(nullptr) : Json(sk_.str(first.parent));
  if (pl.missing_pred) meta["missing_predecessor"] = sk_.str(pl.missing_pred);
  if (pl.cross_session_parent) meta["cross_session_parent"] = sk_.str(pl.cross_session_parent);
  if (auto cy = cycle_.find(p); cy != cycle_.end() && !cy->second.empty()) meta["cycle"] = cy->second;
  n.content = std::move(content);
  n.metadata = std::move(meta);
  if (pl.pred >= 0) n.predecessor = final_id(pl.pred);
  else if (!pl.stored_pred.empty()) n.predecessor = pl.stored_pred;
  if (auto cv = covers_.find(p); cv != covers_.end())
    for (int c : cv->second) n.covers_ids.push_back(final_id(c));
  return n;
}

void Importer::write(int p) {
  Plan& pl = plans_[p];
  begin(pl.session);
  Node n = build(p);
  std::string id = n.id;
  std::string stored = sink_.add(std::move(n), sk_.lines[pl.first].line);
  if (stored != id) renamed_.emplace(p, std::move(stored));
  pl.emitted = true;
}

void Importer::emit(int start) {
  // Parents first (the store's predecessor is a foreign key), iteratively.
  std::vector<int> stack{start};
  std::vector<char> on_stack(plans_.size(), 0);
  on_stack[start] = 1;
  while (!stack.empty()) {
    int p = stack.back();
    if (plans_[p].emitted) {
      stack.pop_back();
      continue;
    }
    int dep = -1;
    for (int d : {plans_[p].pred, plans_[p].cover_last})
      if (d >= 0 && !plans_[d].emitted && !on_stack[d]) {
        dep = d;
        break;
      }
    if (dep >= 0) {
      on_stack[dep] = 1;
      stack.push_back(dep);
      continue;
    }
    // A dependency still on the stack would be a cycle; break_cycles removed them all.
    if (plans_[p].pred >= 0 && !plans_[plans_[p].pred].emitted) {
      cycle_[p] = {plan_id(p), plan_id(plans_[p].pred)};
      plans_[p].pred = -1;
      plans_[p].pred_changed = true;
    }
    write(p);
    stack.pop_back();
  }
}

void Importer::run() {
  sk_ = scan(
      path_, [&](std::int64_t line, const std::string& code, const std::string& msg) { sink_.warn(line, code, msg); },
      true, sink_.resume());
  reader_ = std::make_unique<JsonlReader>(path_, JsonlReader::Warn([](std::int64_t, const std::string&,
                                                                      const std::string&) {}));
  setup_sessions();
  plan_nodes();
  check_resumable();
  break_cycles();
  linearize_results();
  inject_worker_reminders();
  plan_compactions();
  break_cycles();
  compute_covers();
  // Pass 2 needs the lines (offsets, interned ids) and the plans only.
  release(sk_.by_uuid);
  release(sk_.tool_use_line);
  release(sk_.result_pool);
  release(session_of_line_);

  begin(0);
  const std::string& main_id = sessions_[0].info.id;
  for (const auto& [line, raw] : sk_.bad) sink_.keep_record(main_id, line, "unparseable", raw);
  sk_.bad.clear();

  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind == LineKind::keep) {
      std::string raw;
      if (!ln.glued) {
        raw = raw_bytes(ln);
      } else {
        raw = dump_json(reader_->read_at(ln.offset, ln.length, ln.part));
      }
      sink_.keep_record(main_id, ln.line, sk_.str(ln.type), raw);
      continue;
    }
    if (ln.kind != LineKind::node) continue;
    int p = node_of_[i];
    if (p >= 0 && plans_[p].first == i) emit(p);
  }
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p)
    if (!plans_[p].emitted) emit(p);

  // HEAD: per session, the newest leaf in file order (FORMATS §1.5 "walk from the newest leaf").
  std::vector<char> has_child(plans_.size(), 0);
  for (const auto& pl : plans_)
    if (pl.pred >= 0) has_child[pl.pred] = 1;
  std::vector<int> best(sessions_.size(), -1);
  std::vector<int> best_line(sessions_.size(), -1);
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    const Plan& pl = plans_[p];
    if (has_child[p] || pl.kind == PlanKind::summary) continue;
    int last = pl.last;
    if (sk_.lines[pl.first].injected && pl.pred >= 0) last = plans_[pl.pred].last;  // file position of its record
    if (last > best_line[pl.session]) {
      best_line[pl.session] = last;
      best[pl.session] = p;
    }
  }
  for (std::size_t s = 0; s < sessions_.size(); ++s)
    if (best[s] >= 0) sink_.propose_head(sessions_[s].info.id, final_id(best[s]));
}

}  // namespace

std::vector<std::string> claude_code_subagent_files(const std::string& main_path) {
  std::vector<std::string> out;
  fs::path p(main_path);
  fs::path dir = p.parent_path() / p.stem() / "subagents";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".jsonl" && name.rfind("agent-", 0) == 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void import_claude_code(const std::string& path, ImportSink& sink) {
  Importer imp(path, sink);
  imp.run();
}

}  // namespace ctxfold
