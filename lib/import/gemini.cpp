// Gemini CLI chat recording importer (FORMATS.md §3): one JSON object per file,
// {sessionId, projectHash, startTime, lastUpdated, messages[], summary?}; and the newer JSON
// Lines recording (`session-*.jsonl`, Gemini CLI >= ~0.39): a header line {sessionId,
// projectHash, startTime, lastUpdated, kind?}, then one message record per line, where a message
// written again with the same id replaces the earlier version (assistant turns are rewritten as
// they stream), {"$set":{...}} updates header fields ($set.messages replaces the whole list) and
// {"$rewindTo": id} drops that message and everything after it. Message content is a string or
// a Part array ([{text}, ...]); type "model" is an assistant turn like "gemini". A sub-agent
// session (header kind "subagent", file chats/<parent sessionId>/<id>.jsonl) is a sidechain of
// the session whose header sessionId names that folder.
//
// The session id is the file stem: the same sessionId occurs in several files with disjoint
// messages, so sessions are keyed by file. Mapping, in message order (no parent links):
//   user          user node (id = message id)
//   gemini        assistant node (id = message id): thinking blocks from thoughts (no signature;
//                 subjects and timestamps in metadata.thoughts), the text when non-empty, and a
//                 tool_use per toolCalls[] entry; metadata.usage = tokens, metadata.model.
//                 When it has tool calls, a role "tool" node "<msgid>:results" follows with one
//                 tool_result per functionResponse (output, or error → is_error; status
//                 error/cancelled → is_error; a call without any result gets a text result naming
//                 its status). The call's UI fields (status, displayName, resultDisplay, …) are
//                 kept in that node's metadata.tool_calls.
//   info, error   kind "event" nodes (UI notices, never model input)
// Top-level keys other than messages (summary included) become session metadata.
#include <algorithm>
#include <filesystem>
#include <map>

#include "import/formats_common.hpp"
#include "import/import.hpp"
#include "import/jsonl_reader.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::file_name;
using import_detail::file_stem;
using import_detail::line_at;
using import_detail::source_meta;
using import_detail::text_block;
namespace fs = std::filesystem;

constexpr const char* kFormat = "gemini";

/// A functionResponse.response as tool_result content: the output string when that is all it
/// holds, else the whole response as JSON text.
std::pair<Json, bool> result_content(const Json& response) {
  bool is_error = response.is_object() && response.contains("error") && !response["error"].is_null();
  if (response.is_object() && response.size() == 1) {
    const Json& only = response.begin().value();
    if (only.is_string()) return {only, is_error};
  }
  if (response.is_string()) return {response, is_error};
  return {Json(dump_json(response)), is_error};
}

/// Turns Gemini messages into nodes, one linear chain.
struct Converter {
  ImportSink& sink;
  std::string session;
  std::string file;
  std::optional<std::string> last;

  void append(Node n, std::int64_t line) {
    n.session = session;
    n.predecessor = last;
    last = sink.add(std::move(n), line);
  }

  /// Message content as text: a string, or the texts of a Part array (other parts are kept in
  /// metadata.gemini_parts).
  static std::string content_text(const Json& content, Json& other_parts) {
    if (content.is_string()) return content.get<std::string>();
    if (content.is_null()) return {};
    if (!content.is_array()) return dump_json(content);
    std::string text;
    for (const auto& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        if (!text.empty()) text += "\n";
        text += part["text"].get<std::string>();
      } else {
        other_parts.push_back(part);
      }
    }
    return text;
  }

  void message(const Json& m, std::size_t i, std::int64_t line) {
    if (!m.is_object()) {
      sink.warn(line, "record.unexpected", "message " + std::to_string(i) + " is not an object; kept verbatim");
      sink.keep_record(session, line, "message.unexpected", dump_json(m));
      return;
    }
    std::string type = json_str(m, "type");
    std::string id = json_str(m, "id");
    if (id.empty()) id = session + ":" + std::to_string(i);
    Node n;
    n.id = id;
    n.metadata["source"] = source_meta(kFormat, file, line, static_cast<std::int64_t>(i));
    if (m.contains("timestamp")) n.metadata["timestamp"] = m["timestamp"];
    Json other_parts = Json::array();
    const std::string text = content_text(m.contains("content") ? m["content"] : Json(), other_parts);
    if (!other_parts.empty()) n.metadata["gemini_parts"] = other_parts;

    if (type == "user") {
      n.role = role::kUser;
      n.content.push_back(text_block(text));
      Json extra = extra_keys(m, {"id", "timestamp", "type", "content"});
      if (!extra.empty()) n.metadata["gemini_extra"] = extra;
      append(std::move(n), line);
    } else if (type == "gemini" || type == "model") {
      n.role = role::kAssistant;
      Json thoughts_meta = Json::array();
      if (m.contains("thoughts") && m["thoughts"].is_array()) {
        for (const auto& t : m["thoughts"]) {
          n.content.push_back(Json{{"type", "thinking"}, {"thinking", json_str(t, "description")}});
          thoughts_meta.push_back(extra_keys(t, {"description"}));
        }
      }
      if (!thoughts_meta.empty()) n.metadata["thoughts"] = thoughts_meta;
      if (!text.empty()) n.content.push_back(text_block(text));
      const Json calls = m.contains("toolCalls") && m["toolCalls"].is_array() ? m["toolCalls"] : Json::array();
      for (const auto& c : calls)
        n.content.push_back(Json{{"type", "tool_use"},
                                 {"id", json_str(c, "id")},
                                 {"name", json_str(c, "name")},
                                 {"input", c.contains("args") && c["args"].is_object() ? c["args"] : Json::object()}});
      if (m.contains("tokens")) n.metadata["usage"] = m["tokens"];
      if (m.contains("model")) n.metadata["model"] = m["model"];
      Json extra = extra_keys(m, {"id", "timestamp", "type", "content", "thoughts", "toolCalls", "tokens", "model"});
      if (!extra.empty()) n.metadata["gemini_extra"] = extra;
      append(std::move(n), line);
      if (calls.empty()) return;

      Node results;
      results.id = id + ":results";
      results.role = role::kTool;
      results.metadata["source"] = source_meta(kFormat, file, line, static_cast<std::int64_t>(i));
      Json call_meta = Json::array();
      for (const auto& c : calls) {
        std::string call_id = json_str(c, "id");
        std::string status = json_str(c, "status");
        bool status_error = status == "error" || status == "cancelled";
        bool any = false;
        if (c.contains("result") && c["result"].is_array()) {
          for (const auto& r : c["result"]) {
            if (!r.is_object() || !r.contains("functionResponse")) continue;
            const Json& fr = r["functionResponse"];
            auto [rc, err] = result_content(fr.contains("response") ? fr["response"] : Json());
            results.content.push_back(Json{{"type", "tool_result"},
                                           {"tool_use_id", json_str(fr, "id", call_id)},
                                           {"content", rc},
                                           {"is_error", err || status_error}});
            any = true;
          }
        }
        if (!any)
          results.content.push_back(Json{{"type", "tool_result"},
                                         {"tool_use_id", call_id},
                                         {"content", "[tool call " + (status.empty() ? std::string("without result") : status) + "]"},
                                         {"is_error", status != "success"}});
        Json cm = extra_keys(c, {"name", "args", "result"});
        call_meta.push_back(cm);
      }
      results.metadata["tool_calls"] = call_meta;
      append(std::move(results), line);
    } else {
      // info, error and anything newer: UI notices kept in the chain, never model input.
      n.kind = kind::kEvent;
      n.content.push_back(text_block(text));
      n.metadata["gemini_type"] = type;
      Json extra = extra_keys(m, {"id", "timestamp", "type", "content"});
      if (!extra.empty()) n.metadata["gemini_extra"] = extra;
      if (type != "info" && type != "error" && type != "warning")
        sink.warn(line, "record.unknown_type", "unknown Gemini message type '" + type + "' kept as an event node");
      append(std::move(n), line);
    }
  }
};

std::optional<std::string> stored_session_with_id(Store& st, const std::string& gemini_session_id) {
  auto& q = st.db().cached(
      "SELECT id FROM sessions WHERE format='gemini' AND json_extract(metadata, '$.sessionId') = ?1 "
      "AND ifnull(json_extract(metadata, '$.kind'), 'main') <> 'subagent' ORDER BY created_seq LIMIT 1");
  ResetOnExit r(q);
  q.bind(1, gemini_session_id);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

void import_gemini_jsonl(const std::string& path, ImportSink& sink) {
  const std::string session = file_stem(path);
  Json meta = Json::object();
  std::vector<std::string> order;              // message ids, recording order
  std::map<std::string, std::pair<Json, std::int64_t>> by_id;  // id -> (latest message, line)
  std::vector<std::pair<std::int64_t, std::string>> bad;       // unusable bytes, kept verbatim
  std::vector<std::pair<std::int64_t, Json>> unknown;          // other records, kept verbatim
  std::size_t anonymous = 0;
  auto upsert = [&](const Json& m, std::int64_t line) {
    std::string id = m.is_object() ? json_str(m, "id") : std::string();
    if (id.empty()) id = session + ":" + std::to_string(anonymous++);
    auto [it, fresh] = by_id.emplace(id, std::make_pair(m, line));
    if (fresh) order.push_back(id);
    else it->second = {m, line};  // written again (a streamed turn): the newest version wins
  };
  JsonlReader reader(
      path, [&](std::int64_t line, const std::string& code, const std::string& msg) { sink.warn(line, code, msg); },
      [&](std::int64_t line, const std::string& raw) { bad.emplace_back(line, raw); });
  JsonlRecord rec;
  bool first = true;
  while (reader.next(rec)) {
    const Json& v = rec.value;
    const bool header = first && v.is_object() && v.contains("sessionId") && !v.contains("type");
    first = false;
    if (header) {
      for (auto it = v.begin(); it != v.end(); ++it) meta[it.key()] = it.value();
    } else if (v.is_object() && v.contains("$set") && v["$set"].is_object()) {
      for (auto it = v["$set"].begin(); it != v["$set"].end(); ++it) {
        if (it.key() == "messages" && it.value().is_array()) {
          order.clear();
          by_id.clear();
          for (const auto& m : it.value()) upsert(m, rec.line);
        } else {
          meta[it.key()] = it.value();
        }
      }
    } else if (v.is_object() && v.contains("$rewindTo")) {
      const std::string to = v["$rewindTo"].is_string() ? v["$rewindTo"].get<std::string>() : std::string();
      auto at = std::find(order.begin(), order.end(), to);
      if (at == order.end()) {
        sink.warn(rec.line, "record.rewind_unknown", "rewind to message '" + to + "', which the file never wrote");
      } else {
        for (auto k = at; k != order.end(); ++k) by_id.erase(*k);
        order.erase(at, order.end());
      }
    } else if (v.is_object() && v.contains("type") && (v.contains("id") || v.contains("content"))) {
      upsert(v, rec.line);
    } else {
      unknown.emplace_back(rec.line, v);
    }
  }
  SessionInfo info;
  info.id = session;
  info.source = path;
  info.format = kFormat;
  info.metadata = meta;
  if (json_str(meta, "kind") == "subagent") {
    // chats/<parent sessionId>/<id>.jsonl: the parent is the session recorded with that id.
    const std::string parent_id = fs::path(path).parent_path().filename().string();
    info.kind = "sidechain";
    info.metadata["parent_session_id"] = parent_id;
    if (auto parent = stored_session_with_id(sink.store(), parent_id)) info.parent_session = *parent;
    else sink.warn(1, "session.parent_missing", "sub-agent session of '" + parent_id + "', which is not imported");
  }
  sink.begin_session(info);
  for (auto& [line, raw] : bad) sink.keep_record(session, line, "line.bad", raw);
  for (auto& [line, v] : unknown) sink.keep_record(session, line, "record.unknown", dump_json(v));
  Converter conv{sink, session, file_name(path), std::nullopt};
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& [m, line] = by_id[order[i]];
    conv.message(m, i, line);
  }
  if (conv.last) sink.propose_head(session, *conv.last);
}

}  // namespace

void import_gemini(const std::string& path, ImportSink& sink) {
  if (fs::path(path).extension() == ".jsonl") {
    import_gemini_jsonl(path, sink);
    return;
  }
  auto doc = import_detail::parse_document(path, sink);
  std::string session = file_stem(path);
  std::string file = file_name(path);
  SessionInfo info;
  info.id = session;
  info.source = path;
  info.format = kFormat;
  if (!doc) {
    sink.begin_session(info);
    sink.keep_record(session, 1, "document.malformed", import_detail::read_file_bytes(path));
    return;
  }
  const Json& root = doc->value;
  if (!root.is_object() || !root.contains("messages") || !root["messages"].is_array()) {
    sink.warn(1, "document.unexpected", "not a Gemini CLI session: no messages array");
    sink.begin_session(info);
    sink.keep_record(session, 1, "document.unexpected", doc->text);
    return;
  }
  info.metadata = extra_keys(root, {"messages"});
  sink.begin_session(info);
  std::vector<std::int64_t> lines = import_detail::element_lines(doc->text, "messages");
  Converter conv{sink, session, file, std::nullopt};
  const Json& messages = root["messages"];
  for (std::size_t i = 0; i < messages.size(); ++i) conv.message(messages[i], i, line_at(lines, i));
  if (conv.last) sink.propose_head(session, *conv.last);
}

}  // namespace ctxfold
