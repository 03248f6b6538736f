// OpenAI chat-completions `messages` importer (docs/import.md): a JSON array of messages, or an
// object holding one under "messages" (mini-swe-agent .traj.json, request bodies); the object's
// other keys become session metadata. Session id = file stem; node ids "<session>:<index>".
//
//   system, developer   system node (developer: metadata.openai_role "developer")
//   user                user node; content string or parts (text, image_url → image; other
//                       parts kept as opaque{provider:"openai"})
//   assistant           assistant node: reasoning_content → thinking, content, refusal → text,
//                       tool_calls[] → tool_use{id, name, input = parsed arguments or {"raw"}},
//                       legacy function_call → tool_use "<node id>:function_call"
//   tool, function      role "tool" node: one tool_result{tool_use_id: tool_call_id}
// Keys a message carries beyond the API's (name, timestamps, …) go to metadata.openai_extra.
#include "import/formats_common.hpp"
#include "import/import.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::image_from_url;
using import_detail::opaque_block;
using import_detail::parse_arguments;
using import_detail::source_meta;
using import_detail::text_block;

constexpr const char* kOpenaiFormat = "openai";

Json convert_content(const Json& content) {
  Json blocks = Json::array();
  if (content.is_null()) return blocks;
  if (content.is_string()) {
    blocks.push_back(text_block(content.get<std::string>()));
    return blocks;
  }
  if (!content.is_array()) {
    blocks.push_back(opaque_block("openai", content));
    return blocks;
  }
  for (const auto& part : content) {
    std::string type = json_str(part, "type");
    if (part.is_string()) {
      blocks.push_back(text_block(part.get<std::string>()));
    } else if (type == "text" || type == "input_text" || type == "output_text") {
      blocks.push_back(text_block(json_str(part, "text")));
    } else if (type == "image_url" && part.contains("image_url")) {
      const Json& iu = part["image_url"];
      std::string url = iu.is_string() ? iu.get<std::string>() : json_str(iu, "url");
      blocks.push_back(image_from_url(url));
    } else if (type == "refusal") {
      blocks.push_back(text_block(json_str(part, "refusal")));
    } else {
      blocks.push_back(opaque_block("openai", part));
    }
  }
  return blocks;
}

}  // namespace

void import_openai_messages(const std::string& path, ImportSink& sink) {
  auto opened = import_detail::open_item_document(path, sink, kOpenaiFormat, "messages", {"messages"}, "an OpenAI messages document");
  if (!opened) return;
  const std::string& session = opened->session;
  const std::string& file = opened->file;
  const std::vector<std::int64_t>& lines = opened->lines;
  const Json* messages = &opened->items();
  std::optional<std::string> last;
  std::int64_t raw_arguments = 0, first_raw_line = 0;
  std::string legacy_call;  // id given to the latest legacy function_call, answered by role "function"

  for (std::size_t i = 0; i < messages->size(); ++i) {
    const Json& m = (*messages)[i];
    std::int64_t line = import_detail::line_at(lines, i);
    if (!m.is_object()) {
      sink.warn(line, "record.unexpected", "message " + std::to_string(i) + " is not an object; kept verbatim");
      sink.keep_record(session, line, "message.unexpected", dump_json(m));
      continue;
    }
    Node n;
    n.id = session + ":" + std::to_string(i);
    n.session = session;
    n.predecessor = last;
    n.metadata["source"] = source_meta(kOpenaiFormat, file, line, static_cast<std::int64_t>(i));
    std::string r = json_str(m, "role");
    const Json content = m.contains("content") ? m["content"] : Json();
    if (r == "system" || r == "developer") {
      n.role = role::kSystem;
      if (r == "developer") n.metadata["openai_role"] = r;
      n.content = convert_content(content);
    } else if (r == "user") {
      n.role = role::kUser;
      n.content = convert_content(content);
    } else if (r == "assistant") {
      n.role = role::kAssistant;
      for (const char* k : {"reasoning_content", "reasoning"})
        if (auto t = json_str(m, k); !t.empty()) n.content.push_back(Json{{"type", "thinking"}, {"thinking", t}});
      for (auto& b : convert_content(content)) n.content.push_back(b);
      if (auto refusal = json_str(m, "refusal"); !refusal.empty()) n.content.push_back(text_block(refusal));
      auto add_call = [&](const std::string& id, const Json& fn) {
        bool parsed = false;
        Json input = fn.contains("arguments") && fn["arguments"].is_string()
                         ? parse_arguments(fn["arguments"].get<std::string>(), &parsed)
                         : (fn.contains("arguments") && fn["arguments"].is_object() ? fn["arguments"] : Json::object());
        if (fn.contains("arguments") && fn["arguments"].is_string() && !parsed && raw_arguments++ == 0)
          first_raw_line = line;
        n.content.push_back(Json{{"type", "tool_use"}, {"id", id}, {"name", json_str(fn, "name")}, {"input", input}});
      };
      if (m.contains("tool_calls") && m["tool_calls"].is_array())
        for (const auto& tc : m["tool_calls"])
          add_call(json_str(tc, "id"), tc.contains("function") && tc["function"].is_object() ? tc["function"] : Json::object());
      if (m.contains("function_call") && m["function_call"].is_object())
        add_call(legacy_call = n.id + ":function_call", m["function_call"]);
      if (m.contains("usage")) n.metadata["usage"] = m["usage"];
    } else if (r == "tool" || r == "function") {
      n.role = role::kTool;
      std::string call_id = json_str(m, "tool_call_id");
      if (r == "function" && call_id.empty()) call_id = legacy_call;
      Json rc = content.is_string() ? content : Json(convert_content(content));
      n.content.push_back(Json{{"type", "tool_result"}, {"tool_use_id", call_id}, {"content", rc}, {"is_error", false}});
    } else {
      sink.warn(line, "record.unknown_type", "unknown OpenAI message role '" + r + "' kept as an event node");
      n.kind = kind::kEvent;
      n.content = convert_content(content);
      n.metadata["openai_role"] = r;
    }
    Json extra = extra_keys(m, {"role", "content", "tool_calls", "tool_call_id", "function_call", "refusal",
                                "reasoning_content", "reasoning", "usage"});
    if (!extra.empty()) n.metadata["openai_extra"] = extra;
    last = sink.add(std::move(n), line);
  }
  if (raw_arguments > 0)
    sink.warn(first_raw_line, "tool.arguments_raw",
              std::to_string(raw_arguments) + " tool call argument string(s) are not JSON objects; kept as {\"raw\": string}");
  if (last) sink.propose_head(session, *last);
}

}  // namespace ctxfold
