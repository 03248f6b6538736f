// GitHub Copilot CLI event logs (`~/.copilot/session-state/<sessionId>/events.jsonl`) → nodes
// (docs/formats/copilot-cli.md).
//
// Each line is one event {type, data, id, timestamp, parentId}; parentId is only the event before
// it in time, so nodes are chained in file order, one chain per agent:
//   session.start                 begins the session (sessionId, copilotVersion, context.cwd)
//   user.message                  → user node (transformedContent, the text the model read)
//   system.message                → metadata.system_prompt of the node before it
//   session.usage_record          → metadata.usage of the next assistant node of that agent
//   assistant.message             → assistant node: reasoningText (thinking), content (text),
//                                   toolRequests (tool_use)
//   tool.execution_complete       → tool node: tool_result (result.content, or error.message
//                                   with is_error)
//   session.compaction_start      marks where a compaction's history ends: the client goes on
//                                 while it runs (the automatic one runs in the background)
//   session.compaction_complete   → summary view node covering the chain up to that mark; the
//                                 nodes written while it ran are stored after it (they follow
//                                 the summary in what the client sends)
//   an event with an agentId belongs to that sub-agent (subagent.started names the tool call that
//   launched it): the sidechain session "<sessionId>/agent-<agentId>"
// Every event that is not a node (turn starts and ends, tool starts, resumes, shutdowns, the
// compaction call's model.* events, ...) is kept as a source record.
#include "import/copilot.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "import/formats_common.hpp"
#include "import/jsonl_reader.hpp"
#include "model/node.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::file_name;
using import_detail::source_meta;
using import_detail::text_block;

constexpr const char* kCopilotFormat = "copilot";

/// The summary message the client sends in place of the history it compacted: its fixed
/// wording around every user message the session has had and the summaryContent
/// (docs/formats/copilot-cli.md "Compaction").
std::string compaction_message(const std::vector<std::string>& user_texts, const std::string& summary) {
  std::string s =
      "Some of the conversation history has been summarized to free up context.\n\n"
      "You were originally given instructions from a user over one or more turns. Here were the user messages:\n";
  for (const std::string& t : user_texts) s += "<user_message>\n" + t + "\n</user_message>\n";
  s += "\nHere is a summary of the prior context:\n<summary>\n" + summary + "\n</summary>\n";
  return s;
}

/// One agent's chain: the main agent's, or a sub-agent's sidechain session.
struct Chain {
  std::string session;
  std::optional<std::string> last;                 // the newest node
  std::optional<Node> pending;                     // built, not yet added (a system.message may follow)
  std::int64_t pending_line = 0;
  std::optional<Json> usage;                       // the usage record for the next assistant node
  std::string system_prompt;                       // the newest system.message of this agent
  bool system_pending = false;                     // ... not yet given to a node
  std::vector<std::string> user_texts;             // this agent's user messages as typed
  std::map<std::string, std::optional<std::string>> pred_of;  // node id -> its predecessor
  bool compacting = false;                         // a compaction started and has not ended
  std::string compact_attempt;                     // its compactionAttemptId
  std::optional<std::string> compact_tip;          // the newest node when it started
  std::size_t compact_users = 0;                   // how many user messages there were then
  std::vector<std::pair<Node, std::int64_t>> held;  // nodes written while it ran, not yet added
};

class CopilotImporter {
 public:
  CopilotImporter(const std::string& path, ImportSink& sink) : path_(path), file_(file_name(path)), sink_(sink) {}

  void run() {
    JsonlReader reader(
        path_, [&](std::int64_t line, const std::string& code, const std::string& msg) { sink_.warn(line, code, msg); },
        [&](std::int64_t line, const std::string& raw) {
          if (main_) sink_.keep_record(main_->session, line, "line.bad", raw);
          else early_bad_.emplace_back(line, raw);
        },
        sink_.max_record_bytes());
    JsonlRecord rec;
    while (reader.next(rec)) {
      if (!rec.value.is_object()) continue;
      if (!main_) begin(rec.value);
      handle(rec);
    }
    if (!main_) {
      if (early_bad_.empty()) {
        sink_.warn(0, "document.empty", "no events in the Copilot CLI event log");
        return;
      }
      begin(Json::object());
    }
    flush(*main_);
    release(*main_);  // a compaction that never ended (cancelled with the process, or still running)
    for (auto& [id, chain] : agents_) {
      flush(chain);
      release(chain);
    }
    if (main_->last) sink_.propose_head(main_->session, *main_->last);
    for (auto& [id, chain] : agents_)
      if (chain.last) sink_.propose_head(chain.session, *chain.last);
  }

 private:
  /// The session id: session.start's data.sessionId, else the folder the log lies in.
  void begin(const Json& first) {
    const Json data = first.contains("data") && first["data"].is_object() ? first["data"] : Json::object();
    std::string id = json_str(data, "sessionId");
    if (id.empty()) id = std::filesystem::path(path_).parent_path().filename().string();
    SessionInfo info;
    info.id = id;
    info.source = path_;
    info.format = kCopilotFormat;
    for (const char* k : {"copilotVersion", "producer", "selectedModel", "startTime"})
      if (data.contains(k) && data[k].is_string()) info.metadata[k] = data[k];
    if (data.contains("context") && data["context"].is_object() && data["context"].contains("cwd"))
      info.metadata["cwd"] = data["context"]["cwd"];
    sink_.begin_session(std::move(info));
    main_.emplace();
    main_->session = id;
    for (auto& [line, raw] : early_bad_) sink_.keep_record(id, line, "line.bad", raw);
    early_bad_.clear();
  }

  /// The chain an event belongs to: its agentId's sidechain session (begun on first use; the
  /// subagent.started event names the tool call that launched it), or the main agent's.
  Chain& chain_of(const Json& v, const Json& data, std::int64_t line) {
    const std::string agent = json_str(v, "agentId");
    if (agent.empty()) return *main_;
    auto it = agents_.find(agent);
    if (it != agents_.end()) return it->second;
    Chain& c = agents_[agent];
    c.session = main_->session + "/agent-" + agent;
    SessionInfo info;
    info.id = c.session;
    info.kind = "sidechain";
    info.parent_session = main_->session;
    info.source = path_;
    info.format = kCopilotFormat;
    info.metadata["agent_id"] = agent;
    const std::string call = json_str(data, json_str(v, "type") == "subagent.started" ? "toolCallId" : "parentToolCallId");
    if (!call.empty()) info.metadata["parent_tool_call_id"] = call;
    flush(*main_);  // the launching node must be stored before the sidechain points at it
    store_held(*main_);
    if (auto n = call_node_.find(call); n != call_node_.end()) info.parent_node = n->second;
    else sink_.warn(line, "session.parent_missing", fmt::format("events of sub-agent '{}', whose launching tool call is unknown", agent));
    sink_.begin_session(std::move(info));
    return c;
  }

  void handle(const JsonlRecord& rec) {
    const Json& v = rec.value;
    const std::string type = json_str(v, "type");
    const Json data = v.contains("data") && v["data"].is_object() ? v["data"] : Json::object();
    if (type.empty()) {
      sink_.warn(rec.line, "record.unknown_type", "a Copilot CLI event without a type; kept as a source record");
      sink_.keep_record(main_->session, rec.line, "event", dump_json(v));
      return;
    }
    Chain& c = chain_of(v, data, rec.line);
    if (type == "user.message") {
      user_message(c, rec, data);
    } else if (type == "assistant.message") {
      assistant_message(c, rec, data);
    } else if (type == "tool.execution_complete") {
      tool_complete(c, rec, data);
    } else if (type == "system.message" && json_str(data, "role", "system") == "system" &&
               !json_str(data, "content").empty()) {  // an empty one sets no prompt: a record only
      const std::string before = c.system_prompt;
      c.system_prompt = json_str(data, "content");
      sink_.keep_record(c.session, rec.line, type, dump_json(v));
      // A turn's system.message follows its user message. One after another node (an assistant
      // reply, or a node stored already because other events came between: a damaged log) that
      // changes the prompt would change a request that was already sent: a record only.
      const bool fits = c.pending ? c.pending->role == role::kUser : !c.last;
      if (c.system_prompt != before && !fits) {
        sink_.warn(rec.line, "system.late",
                   "a Copilot CLI system.message that does not follow a user message changes the system prompt; kept as a source record only");
        c.system_prompt = before;
      } else if (c.pending) {
        c.pending->metadata["system_prompt"] = c.system_prompt;
      } else {
        c.system_pending = true;
      }
    } else if (type == "session.usage_record" && data.contains("usage") && data["usage"].is_object()) {
      c.usage = data["usage"];
      sink_.keep_record(c.session, rec.line, type, dump_json(v));
    } else if (type == "session.compaction_start") {
      sink_.keep_record(c.session, rec.line, type, dump_json(v));
      flush(c);
      store_held(c);
      c.compacting = true;
      c.compact_attempt = json_str(data, "compactionAttemptId");
      c.compact_tip = c.last;
      c.compact_users = c.user_texts.size();
    } else if (type == "session.compaction_complete") {
      sink_.keep_record(c.session, rec.line, type, dump_json(v));
      compaction(c, rec, data);
    } else {
      sink_.keep_record(c.session, rec.line, type, dump_json(v));
    }
  }

  Node make_node(const Chain& c, const JsonlRecord& rec, const char* role) {
    Node n;
    n.id = json_str(rec.value, "id");
    if (n.id.empty()) n.id = fmt::format("{}:{}", c.session, rec.line);
    n.session = c.session;
    n.kind = kind::kMessage;
    n.role = role;
    n.content = Json::array();
    if (rec.value.contains("timestamp")) n.metadata["timestamp"] = rec.value["timestamp"];
    n.metadata["source"] = source_meta(kCopilotFormat, file_, rec.line);
    return n;
  }

  void user_message(Chain& c, const JsonlRecord& rec, const Json& data) {
    Node n = make_node(c, rec, role::kUser);
    const std::string typed = json_str(data, "content");
    const std::string sent = json_str(data, "transformedContent", typed);
    if (!sent.empty()) n.content.push_back(text_block(sent));
    if (sent != typed) n.metadata["typed"] = typed;
    Json extra = extra_keys(data, {"content", "transformedContent"});
    if (!extra.empty()) n.metadata["copilot"] = std::move(extra);
    c.user_texts.push_back(typed);
    queue(c, std::move(n), rec.line);
  }

  void assistant_message(Chain& c, const JsonlRecord& rec, const Json& data) {
    Node n = make_node(c, rec, role::kAssistant);
    const std::string reasoning = json_str(data, "reasoningText");
    if (!reasoning.empty()) n.content.push_back(Json{{"type", "thinking"}, {"thinking", reasoning}});
    const std::string text = json_str(data, "content");
    if (!text.empty()) n.content.push_back(text_block(text));
    if (data.contains("toolRequests") && data["toolRequests"].is_array()) {
      for (const Json& t : data["toolRequests"]) {
        if (!t.is_object()) continue;
        Json input = t.contains("arguments") ? t["arguments"] : Json::object();
        if (input.is_string()) input = import_detail::parse_arguments(input.get<std::string>());
        const std::string call = json_str(t, "toolCallId");
        n.content.push_back(Json{{"type", "tool_use"}, {"id", call}, {"name", json_str(t, "name")}, {"input", input}});
        call_node_[call] = n.id;
      }
    }
    if (data.contains("model") && data["model"].is_string()) n.metadata["model"] = data["model"];
    if (c.usage) {
      n.metadata["usage"] = *c.usage;
      if (!n.metadata.contains("model") && c.usage->contains("model")) n.metadata["model"] = (*c.usage)["model"];
      c.usage.reset();
    }
    Json extra = extra_keys(data, {"content", "reasoningText", "toolRequests", "model"});
    if (!extra.empty()) n.metadata["copilot"] = std::move(extra);
    queue(c, std::move(n), rec.line);
  }

  void tool_complete(Chain& c, const JsonlRecord& rec, const Json& data) {
    Node n = make_node(c, rec, role::kTool);
    const bool ok = data.value("success", true);
    Json content = "";
    const Json* src = data.contains(ok ? "result" : "error") ? &data[ok ? "result" : "error"] : nullptr;
    if (src && src->is_object()) {
      const char* key = ok ? "content" : "message";
      content = src->contains(key) ? (*src)[key] : Json(dump_json(*src));
    } else if (src && src->is_string()) {
      content = *src;
    }
    if (!content.is_string() && !content.is_array()) content = dump_json(content);
    n.content.push_back(Json{{"type", "tool_result"},
                             {"tool_use_id", json_str(data, "toolCallId")},
                             {"content", content},
                             {"is_error", !ok}});
    Json extra = extra_keys(data, {"toolCallId", "success", "result", "error"});
    if (src && src->is_object()) {
      Json rest = extra_keys(*src, {"content", "message"});
      if (!rest.empty()) extra[ok ? "result" : "error"] = std::move(rest);
    }
    if (!extra.empty()) n.metadata["copilot"] = std::move(extra);
    queue(c, std::move(n), rec.line);
  }

  /// A node waits one event: a system.message right after it becomes its metadata.system_prompt.
  void queue(Chain& c, Node n, std::int64_t line) {
    flush(c);
    n.predecessor = c.last;
    if (c.system_pending) {
      n.metadata["system_prompt"] = c.system_prompt;
      c.system_pending = false;
    }
    c.pred_of[n.id] = c.last;
    c.last = n.id;
    c.pending = std::move(n);
    c.pending_line = line;
  }

  /// The pending node is added, or held while a compaction runs (added after its summary).
  void flush(Chain& c) {
    if (!c.pending) return;
    Node n = std::move(*c.pending);
    c.pending.reset();
    if (c.compacting) c.held.emplace_back(std::move(n), c.pending_line);
    else store(c, std::move(n), c.pending_line);
  }

  void store(Chain& c, Node n, std::int64_t line) {
    const std::string asked = n.id;
    std::string id = sink_.add(std::move(n), line);
    if (id != asked) {  // stored under another id (a conflict copy): the chain follows it
      c.pred_of[id] = c.pred_of[asked];
      if (c.last == asked) c.last = id;
      for (auto& [held, at] : c.held)
        if (held.predecessor == asked) held.predecessor = id;
    }
  }

  /// Adds the held nodes now (a sub-agent launched by one of them must find it stored).
  void store_held(Chain& c) {
    std::vector<std::pair<Node, std::int64_t>> held = std::move(c.held);
    c.held.clear();
    for (auto& [n, line] : held) store(c, std::move(n), line);
  }

  /// The running compaction ended: the nodes held while it ran are added.
  void release(Chain& c) {
    c.compacting = false;
    store_held(c);
  }

  /// The nodes from the root to `tip` along predecessors, root first.
  static std::vector<std::string> spine_to(const Chain& c, std::optional<std::string> tip) {
    std::vector<std::string> out;
    std::set<std::string> seen;  // event ids repeat in a damaged log: a link back ends the walk
    for (std::optional<std::string> at = tip; at && seen.insert(*at).second;) {
      out.push_back(*at);
      auto it = c.pred_of.find(*at);
      if (it == c.pred_of.end()) break;
      at = it->second;
    }
    return {out.rbegin(), out.rend()};
  }

  /// session.compaction_complete: on success, the summary message the client sends from now on
  /// (compaction_message, with the user messages there were when it started) as a summary view
  /// node covering the chain up to where its compaction_start was (the whole chain without one);
  /// then the nodes written while it ran. The chain goes on from the last node.
  void compaction(Chain& c, const JsonlRecord& rec, const Json& data) {
    flush(c);
    const bool started = c.compacting && (c.compact_attempt.empty() || json_str(data, "compactionAttemptId").empty() ||
                                          c.compact_attempt == json_str(data, "compactionAttemptId"));
    std::vector<std::string> covers = spine_to(c, started ? c.compact_tip : c.last);
    const std::vector<std::string> users(c.user_texts.begin(),
                                         c.user_texts.begin() + static_cast<std::ptrdiff_t>(started ? c.compact_users : c.user_texts.size()));
    const bool ok = data.value("success", false) && data.contains("summaryContent") && data["summaryContent"].is_string();
    if (!ok || covers.empty()) {
      sink_.warn(rec.line, "compaction.empty",
                 "a Copilot CLI compaction that failed, has no summaryContent or nothing before it; kept as a record only");
      release(c);
      return;
    }
    Node n = make_node(c, rec, role::kUser);
    n.kind = kind::kSummary;
    n.covers_ids = std::move(covers);
    n.content.push_back(text_block(compaction_message(users, data["summaryContent"].get<std::string>())));
    n.metadata["strategy"] = "rolling";
    n.metadata["origin"] = "import";
    n.metadata["format"] = kCopilotFormat;
    n.metadata["recap"] = false;
    n.metadata["summary_content"] = data["summaryContent"];
    if (data.contains("trigger")) n.metadata["trigger"] = data["trigger"];
    n.metadata["compact_metadata"] = extra_keys(data, {"summaryContent", "success"});
    if (!c.system_prompt.empty()) n.metadata["system_prompt"] = c.system_prompt;
    sink_.add(std::move(n), rec.line);
    release(c);
  }

  std::string path_, file_;
  ImportSink& sink_;
  std::optional<Chain> main_;
  std::map<std::string, Chain> agents_;              // agentId -> sub-agent chain
  std::map<std::string, std::string> call_node_;     // tool call id -> the node that requested it
  std::vector<std::pair<std::int64_t, std::string>> early_bad_;
};

}  // namespace

void import_copilot(const std::string& path, ImportSink& sink) { CopilotImporter(path, sink).run(); }

}  // namespace ctxfold
