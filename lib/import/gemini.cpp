// Gemini CLI chat recording importer (FORMATS.md §3): one JSON object per file,
// {sessionId, projectHash, startTime, lastUpdated, messages[], summary?}.
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
#include "import/formats_common.hpp"
#include "import/import.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::file_name;
using import_detail::file_stem;
using import_detail::line_at;
using import_detail::source_meta;
using import_detail::text_block;

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

}  // namespace

void import_gemini(const std::string& path, ImportSink& sink) {
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

  std::optional<std::string> last;
  auto append = [&](Node n, std::int64_t line) {
    n.session = session;
    n.predecessor = last;
    last = sink.add(std::move(n), line);
  };

  const Json& messages = root["messages"];
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    std::int64_t line = line_at(lines, i);
    if (!m.is_object()) {
      sink.warn(line, "record.unexpected", "message " + std::to_string(i) + " is not an object; kept verbatim");
      sink.keep_record(session, line, "message.unexpected", dump_json(m));
      continue;
    }
    std::string type = json_str(m, "type");
    std::string id = json_str(m, "id");
    if (id.empty()) id = session + ":" + std::to_string(i);
    Node n;
    n.id = id;
    n.metadata["source"] = source_meta(kFormat, file, line, static_cast<std::int64_t>(i));
    if (m.contains("timestamp")) n.metadata["timestamp"] = m["timestamp"];
    const Json content = m.contains("content") ? m["content"] : Json();
    std::string text = content.is_string() ? content.get<std::string>() : (content.is_null() ? "" : dump_json(content));

    if (type == "user") {
      n.role = role::kUser;
      n.content.push_back(text_block(text));
      Json extra = extra_keys(m, {"id", "timestamp", "type", "content"});
      if (!extra.empty()) n.metadata["gemini_extra"] = extra;
      append(std::move(n), line);
    } else if (type == "gemini") {
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
      if (calls.empty()) continue;

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
      if (type != "info" && type != "error")
        sink.warn(line, "record.unknown_type", "unknown Gemini message type '" + type + "' kept as an event node");
      append(std::move(n), line);
    }
  }
  if (last) sink.propose_head(session, *last);
}

}  // namespace ctxfold
