// Cline CLI session files (`~/.cline/data/sessions/<id>/<id>.messages.json` with the session's
// `<id>.json` beside it, and `agent_<n>.messages.json` for each sub-agent) → nodes
// (docs/formats/cline.md).
//
// A messages file is one JSON object {version, updated_at, agent: "lead" | "subagent",
// sessionId, origin, messages: [...], system_prompt}; each message is an Anthropic Messages
// message {id, role, content: [blocks], ts, modelInfo, metrics}:
//   user        → user node; the `<user_input mode="...">` wrapper Cline stores around a typed
//                 prompt is taken off (the model reads the prompt without it)
//   user of tool_result blocks only → tool node; a result whose content is an array of Cline's
//                 {query, result, success} records is the JSON text the client sends
//   assistant   → assistant node; metrics as metadata.usage, modelInfo.id as metadata.model
// system_prompt and the session file's provider, model, cwd, times and title are session
// metadata; a sub-agent's file is the sidechain session of origin.parentThreadId, launched by the
// node whose spawn_agent call has its task (whose systemPrompt is the sub-agent's system prompt).
// The compaction state beside it (`<stem>.compaction.json`: the messages the client sends in place
// of the first source_message_count ones) becomes a summary view node covering the messages its
// summary replaced; the verbatim copies after the summary stay the raw nodes they copy.
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <set>

#include "import/formats_common.hpp"
#include "import/import.hpp"
#include "model/node.hpp"
#include "util/environment.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;
using import_detail::extra_keys;
using import_detail::source_meta;
using import_detail::text_block;

constexpr const char* kClineFormat = "cline";

/// The ISO 8601 time of a millisecond Unix timestamp.
std::string iso_ms(std::int64_t ms) {
  std::string s = rfc3339_utc(ms / 1000);
  s.insert(s.size() - 1, fmt::format(".{:03}", ms % 1000));
  return s;
}

/// The prompt inside Cline's `<user_input mode="act">...</user_input>` wrapper, or nullopt.
std::optional<std::string> unwrap_user_input(const std::string& t) {
  const std::string open = "<user_input", close = "</user_input>";
  if (t.rfind(open, 0) != 0 || t.size() < close.size() || t.compare(t.size() - close.size(), close.size(), close) != 0)
    return std::nullopt;
  std::size_t gt = t.find('>');
  if (gt == std::string::npos || gt + 1 > t.size() - close.size()) return std::nullopt;
  return t.substr(gt + 1, t.size() - close.size() - gt - 1);
}

/// A tool_result whose content is an array of records without a block type (Cline's
/// {query, result, success}): the client sends them as their JSON text, so they are that text.
Json cline_block(const Json& b, Json& extras) {
  if (json_str(b, "type") == "tool_result" && b.contains("content") && b["content"].is_array()) {
    bool records = !b["content"].empty();
    for (const Json& c : b["content"])
      if (!c.is_object() || c.contains("type")) records = false;
    if (records) {
      Json copy = b;
      copy["content"] = dump_json(b["content"]);
      return import_detail::anthropic_block(copy, extras);
    }
  }
  return import_detail::anthropic_block(b, extras);
}

/// The first text of a messages file's first message (a sub-agent's task), or "".
std::string first_text(const Json& doc) {
  if (!doc.contains("messages") || !doc["messages"].is_array() || doc["messages"].empty()) return "";
  const Json& m = doc["messages"][0];
  if (!m.is_object() || !m.contains("content")) return "";
  if (m["content"].is_string()) return m["content"].get<std::string>();
  if (m["content"].is_array())
    for (const Json& b : m["content"])
      if (json_str(b, "type") == "text") return json_str(b, "text");
  return "";
}

/// A sub-agent's launch in its parent session: the node whose spawn_agent call has the
/// sub-agent's task, which also gives the sub-agent's system prompt (its file holds none).
void link_spawn(Store& store, const std::string& parent, const std::string& task, SessionInfo& info) {
  if (task.empty()) return;
  store.for_each_node(parent, [&](const Node& n) {
    for (const Json& b : n.content)
      if (json_str(b, "type") == "tool_use" && json_str(b, "name") == "spawn_agent" && b.contains("input") &&
          json_str(b["input"], "task") == task) {
        info.parent_node = n.id;
        info.metadata["spawn_tool_use_id"] = json_str(b, "id");
        if (!info.metadata.contains("system_prompt") && b["input"].contains("systemPrompt"))
          info.metadata["system_prompt"] = b["input"]["systemPrompt"];
        return false;
      }
    return true;
  });
}

/// The session row: the messages file's own fields, the session file beside it (the lead's
/// `<id>.json`), and for a sub-agent its parent thread.
SessionInfo session_info(const std::string& path, const Json& doc, const std::string& id, ImportSink& sink) {
  SessionInfo info;
  info.id = id;
  info.source = path;
  info.format = kClineFormat;
  for (const char* k : {"agent", "taskType"})
    if (doc.contains(k) && doc[k].is_string()) info.metadata[k] = doc[k];
  if (doc.contains("system_prompt") && doc["system_prompt"].is_string()) info.metadata["system_prompt"] = doc["system_prompt"];
  const fs::path side = fs::path(path).parent_path() / (id + ".json");
  std::error_code ec;
  if (fs::is_regular_file(side, ec)) {
    try {
      Json s = parse_json(import_detail::read_file_bytes(side.string()));
      for (const char* k : {"provider", "model", "cwd", "workspace_root", "started_at", "ended_at", "status", "prompt"})
        if (s.contains(k) && s[k].is_string()) info.metadata[k] = s[k];
      if (s.contains("metadata") && s["metadata"].is_object()) {
        const Json& m = s["metadata"];
        if (m.contains("title")) info.metadata["title"] = m["title"];
        if (m.contains("aggregateUsage")) info.metadata["aggregate_usage"] = m["aggregateUsage"];
      }
    } catch (const std::exception&) {
      sink.warn(0, "session.file_unreadable", fmt::format("'{}' beside the messages file is not readable JSON", side.string()));
    }
  }
  const Json origin = doc.contains("origin") && doc["origin"].is_object() ? doc["origin"] : Json::object();
  const std::string parent = json_str(origin, "parentThreadId");
  if (!parent.empty()) {
    info.kind = "sidechain";
    info.metadata["parent_thread_id"] = parent;
    if (sink.store().session(parent)) {
      info.parent_session = parent;
      link_spawn(sink.store(), parent, first_text(doc), info);
    } else {
      sink.warn(1, "session.parent_missing", "sub-agent session of '" + parent + "', which is not imported");
    }
  }
  return info;
}

Node message_node(const Json& m, const std::string& session, const std::string& file, std::int64_t line, std::size_t i) {
  Node n;
  n.id = json_str(m, "id", fmt::format("{}:{}", session, i));
  n.session = session;
  n.kind = kind::kMessage;
  n.content = Json::array();
  Json block_extras = Json::object();
  const Json content = m.contains("content") ? m["content"] : Json();
  if (content.is_string()) {
    n.content.push_back(text_block(content.get<std::string>()));
  } else if (content.is_array()) {
    for (std::size_t k = 0; k < content.size(); ++k) {
      Json extras = Json::object();
      n.content.push_back(cline_block(content[k], extras));
      if (!extras.empty()) block_extras[std::to_string(k)] = extras;
    }
  }
  if (!block_extras.empty()) n.metadata["block_extras"] = block_extras;
  const std::string r = json_str(m, "role");
  bool only_results = !n.content.empty();
  for (const auto& b : n.content)
    if (json_str(b, "type") != "tool_result") only_results = false;
  n.role = r == "assistant" ? role::kAssistant : only_results ? role::kTool : role::kUser;
  if (n.role == role::kUser)
    for (auto& b : n.content)
      if (json_str(b, "type") == "text")
        if (auto inner = unwrap_user_input(json_str(b, "text"))) {
          n.metadata["user_input"] = json_str(b, "text");
          b["text"] = *inner;
        }
  if (m.contains("ts") && m["ts"].is_number_integer()) n.metadata["timestamp"] = iso_ms(m["ts"].get<std::int64_t>());
  if (m.contains("metrics") && m["metrics"].is_object()) n.metadata["usage"] = m["metrics"];
  if (m.contains("modelInfo") && m["modelInfo"].is_object() && m["modelInfo"].contains("id"))
    n.metadata["model"] = m["modelInfo"]["id"];
  Json extra = extra_keys(m, {"id", "role", "content", "ts", "metrics"});
  if (!extra.empty()) n.metadata["cline"] = std::move(extra);
  n.metadata["source"] = source_meta(kClineFormat, file, line, static_cast<std::int64_t>(i));
  return n;
}

/// A message the client neither counts nor sends (metadata.displayOnly: a status line).
bool display_only(const Json& m) {
  return m.is_object() && m.contains("metadata") && m["metadata"].is_object() &&
         m["metadata"].value("displayOnly", false) == true;
}

/// Cline's key of a message in a compaction state's source_last_message_key: `id:ID`, else
/// `ts:ROLE:TS`, else "" (the content form is not recomputed here).
std::string message_key(const Json& m) {
  const std::string id = json_str(m, "id");
  if (!id.empty()) return "id:" + id;
  if (m.contains("ts") && m["ts"].is_number()) return fmt::format("ts:{}:{}", json_str(m, "role"), dump_json(m["ts"]));
  return "";
}

/// What a compaction state stands for in the messages file: the summary is the first `leading`
/// of its messages and replaces the first `covered` counted messages; its other messages are
/// verbatim copies of the counted messages after those.
struct ClineCompaction {
  Json state;
  std::string file;
  std::size_t covered = 0;
  std::size_t leading = 0;
};

/// True when every tool call among the first n counted messages has its result among them (a
/// summary's edge never splits a call from its result).
bool calls_answered(const std::vector<const Json*>& counted, std::size_t n) {
  std::set<std::string> calls;
  for (std::size_t i = 0; i < n; ++i)
    if (counted[i]->contains("content") && (*counted[i])["content"].is_array())
      for (const Json& b : (*counted[i])["content"]) {
        if (json_str(b, "type") == "tool_use") calls.insert(json_str(b, "id"));
        if (json_str(b, "type") == "tool_result") calls.erase(json_str(b, "tool_use_id"));
      }
  return calls.empty();
}

/// The compaction state beside the messages file at `path` (`<stem>.compaction.json`, where stem
/// is the file name less `.messages.json`) matched against its counted messages, or nullopt when
/// there is none. A state the client itself would not apply (more source messages than the file
/// holds, another last message) or that replaces nothing is a warning, kept as a record.
std::optional<ClineCompaction> read_compaction(const std::string& path, const std::string& session,
                                               const std::vector<const Json*>& counted, ImportSink& sink) {
  std::string name = fs::path(path).filename().string();
  if (!name.ends_with(".messages.json")) return std::nullopt;
  name.resize(name.size() - std::string(".messages.json").size());
  const fs::path side = fs::path(path).parent_path() / (name + ".compaction.json");
  std::error_code ec;
  if (!fs::is_regular_file(side, ec)) return std::nullopt;
  ClineCompaction c;
  c.file = side.filename().string();
  std::string raw;
  auto reject = [&](const std::string& why) -> std::optional<ClineCompaction> {
    sink.warn(0, "compaction.unused", fmt::format("'{}': {}; kept as a record, no summary node", side.string(), why));
    if (!raw.empty()) sink.keep_record(session, 0, "compaction", raw);
    return std::nullopt;
  };
  if (fs::file_size(side, ec) > sink.max_record_bytes()) return reject("larger than the record limit");
  try {
    raw = import_detail::read_file_bytes(side.string());
    c.state = parse_json(raw);
  } catch (const std::exception&) {
    return reject("not readable JSON");
  }
  const Json& st = c.state;
  if (!st.is_object() || !st.contains("messages") || !st["messages"].is_array() ||
      !st.contains("source_message_count") || !st["source_message_count"].is_number_unsigned())
    return reject("not a compaction state (messages, source_message_count)");
  const std::size_t count = st["source_message_count"].get<std::size_t>();
  const Json& msgs = st["messages"];
  if (count == 0 || count > counted.size()) return reject(fmt::format("it replaces {} messages, the file counts {}", count, counted.size()));
  const std::string key = json_str(st, "source_last_message_key"), have = message_key(*counted[count - 1]);
  if (!key.empty() && !have.empty() && key != have)
    return reject(fmt::format("its last source message is '{}', the file's is '{}' (the client ignores it too)", key, have));
  // The longest run at its end that copies the counted messages before source_message_count.
  std::size_t kept = 0;
  while (kept < msgs.size() && kept < count && msgs[msgs.size() - 1 - kept] == *counted[count - 1 - kept]) ++kept;
  while (kept > 0 && !calls_answered(counted, count - kept)) --kept;
  c.covered = count - kept;
  c.leading = msgs.size() - kept;
  if (c.leading == 0) return reject("it holds only copies of the messages it stands for");
  return c;
}

/// The summary view node of a compaction state: the blocks of its leading messages (as
/// message_node reads them), one replacement_history item per message so a render sends each
/// in its role; covers: the chain up to the last replaced message.
Node compaction_node(const ClineCompaction& c, const std::string& session, std::vector<std::string> covers) {
  Node n;
  n.id = fmt::format("{}:compaction:{}", session, json_str(c.state, "updated_at", std::to_string(c.covered)));
  n.session = session;
  n.kind = kind::kSummary;
  n.role = role::kUser;
  n.covers_ids = std::move(covers);
  n.content = Json::array();
  Json described = Json::array();
  for (std::size_t k = 0; k < c.leading; ++k) {
    const Json& m = c.state["messages"][k];
    if (!m.is_object()) continue;
    Node part = message_node(m, session, c.file, 1, k);
    described.push_back(Json{{"type", "message"},
                             {"role", part.role == role::kAssistant ? "assistant" : "user"},
                             {"blocks", part.content.size()}});
    for (auto& b : part.content) n.content.push_back(std::move(b));
    if (k == 0 && m.contains("metadata") && m["metadata"].is_object()) n.metadata["compact_metadata"] = m["metadata"];
  }
  n.metadata["strategy"] = "rolling";
  n.metadata["origin"] = "import";
  n.metadata["format"] = kClineFormat;
  n.metadata["recap"] = false;
  n.metadata["replacement_history"] = std::move(described);
  n.metadata["source_message_count"] = c.state["source_message_count"];
  if (c.state.contains("updated_at")) n.metadata["timestamp"] = c.state["updated_at"];
  n.metadata["source"] = source_meta(kClineFormat, c.file, 1);
  return n;
}

}  // namespace

void import_cline(const std::string& path, ImportSink& sink) {
  if (import_detail::document_too_large(path, sink)) return;
  auto doc = import_detail::parse_document(path, sink);
  if (!doc) return;
  const Json& v = doc->value;
  const std::string file = import_detail::file_name(path);
  std::string id = json_str(v, "sessionId");
  if (id.empty()) {
    id = import_detail::file_stem(path);
    if (id.size() > 9 && id.compare(id.size() - 9, 9, ".messages") == 0) id.resize(id.size() - 9);
  }
  sink.begin_session(session_info(path, v, id, sink));
  if (!v.is_object() || !v.contains("messages") || !v["messages"].is_array()) {
    sink.warn(1, "document.unexpected", "a Cline messages file without a messages array; kept whole as a source record");
    sink.keep_record(id, 1, "document", doc->text);
    return;
  }
  const std::vector<std::int64_t> lines = import_detail::element_lines(doc->text, "messages");
  std::vector<const Json*> counted;
  for (const Json& m : v["messages"])
    if (m.is_object() && !display_only(m)) counted.push_back(&m);
  const std::optional<ClineCompaction> compaction = read_compaction(path, id, counted, sink);
  std::optional<std::string> last;
  std::vector<std::string> chain;
  std::size_t seen = 0;
  for (std::size_t i = 0; i < v["messages"].size(); ++i) {
    const Json& m = v["messages"][i];
    const std::int64_t line = import_detail::line_at(lines, i);
    if (!m.is_object()) {
      sink.warn(line, "record.unexpected", fmt::format("message {} is not an object; kept verbatim", i));
      sink.keep_record(id, line, "message.unexpected", dump_json(m));
      continue;
    }
    Node n = message_node(m, id, file, line, i);
    n.predecessor = last;
    last = sink.add(std::move(n), line);
    chain.push_back(*last);
    // The summary is stored right after the last message it replaces: before the copies that
    // follow it in the context, so a read as of any later node holds it.
    if (!display_only(m) && ++seen == (compaction ? compaction->covered : 0))
      sink.add(compaction_node(*compaction, id, chain), line);
  }
  if (last) sink.propose_head(id, *last);
}

}  // namespace ctxfold
