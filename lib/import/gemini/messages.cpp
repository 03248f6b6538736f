// Gemini CLI chat messages → ctxfold node content (docs/formats/gemini.md, "Messages").
#include "import/gemini/messages.hpp"

#include "import/formats_common.hpp"
#include "model/node.hpp"

namespace ctxfold::gemini_detail {
namespace {

using import_detail::extra_keys;
using import_detail::text_block;

/// A functionResponse.response as tool_result content: the output (or error) string when that
/// is all it holds, else the whole response as JSON text; is_error when it has an error.
std::pair<Json, bool> result_content(const Json& response) {
  bool is_error = response.is_object() && response.contains("error") && !response["error"].is_null();
  if (response.is_object() && response.size() == 1) {
    const Json& only = response.begin().value();
    if (only.is_string()) return {only, is_error};
  }
  if (response.is_string()) return {response, is_error};
  return {Json(dump_json(response)), is_error};
}

Json with_signature(Json block, const Json& part, const char* field) {
  if (part.contains("thoughtSignature") && part["thoughtSignature"].is_string())
    block[field] = part["thoughtSignature"];
  return block;
}

/// One API Part as a block.
Json part_block(const Json& part) {
  if (part.is_string()) return text_block(part.get<std::string>());
  if (!part.is_object()) return import_detail::opaque_block("gemini", part);
  if (part.contains("functionCall") && part["functionCall"].is_object()) {
    const Json& fc = part["functionCall"];
    Json b{{"type", "tool_use"},
           {"id", json_str(fc, "id", json_str(fc, "name"))},
           {"name", json_str(fc, "name")},
           {"input", fc.contains("args") && fc["args"].is_object() ? fc["args"] : Json::object()}};
    return with_signature(std::move(b), part, "gemini_signature");
  }
  if (part.contains("functionResponse") && part["functionResponse"].is_object()) {
    const Json& fr = part["functionResponse"];
    auto [content, err] = result_content(fr.contains("response") ? fr["response"] : Json());
    return Json{{"type", "tool_result"},
                {"tool_use_id", json_str(fr, "id", json_str(fr, "name"))},
                {"content", content},
                {"is_error", err},
                {"name", json_str(fr, "name")}};
  }
  if (part.contains("inlineData") && part["inlineData"].is_object()) {
    const Json& d = part["inlineData"];
    return Json{{"type", "image"}, {"media_type", json_str(d, "mimeType")}, {"data", json_str(d, "data")}};
  }
  if (part.contains("fileData") && part["fileData"].is_object()) {
    const Json& d = part["fileData"];
    return Json{{"type", "image"}, {"media_type", json_str(d, "mimeType")}, {"ref", json_str(d, "fileUri")}};
  }
  if (part.contains("text") && part["text"].is_string()) {
    if (part.value("thought", false) == true)
      return with_signature(Json{{"type", "thinking"}, {"thinking", part["text"]}}, part, "signature");
    return with_signature(text_block(part["text"].get<std::string>()), part, "gemini_signature");
  }
  if (part.value("thought", false) == true)  // a signature-only thought part
    return with_signature(Json{{"type", "thinking"}, {"thinking", ""}}, part, "signature");
  return import_detail::opaque_block("gemini", part);
}

/// The content as a Part array (a string is one text part; null is none).
Json parts_of(const Json& content) {
  if (content.is_array()) return content;
  if (content.is_null()) return Json::array();
  if (content.is_string()) return content.get<std::string>().empty() ? Json::array() : Json::array({content});
  return Json::array({content});
}

bool any_part(const Json& parts, const char* key) {
  for (const auto& p : parts)
    if (p.is_object() && p.contains(key) && !(p[key].is_boolean() && !p[key].get<bool>())) return true;
  return false;
}

}  // namespace

std::string message_text(const Json& m) {
  if (!m.is_object() || !m.contains("content")) return {};
  const Json& c = m["content"];
  if (c.is_string()) return c.get<std::string>();
  std::string out;
  if (c.is_array())
    for (const auto& p : c)
      if (p.is_object() && p.contains("text") && p["text"].is_string()) out += p["text"].get<std::string>();
  return out;
}

const char* odd_field(const Json& m) {
  auto bad = [&](const char* key, bool (*ok)(const Json&)) {
    auto it = m.find(key);
    return it != m.end() && !it->is_null() && !ok(*it);
  };
  auto is_string = [](const Json& j) { return j.is_string(); };
  auto is_array = [](const Json& j) { return j.is_array(); };
  auto is_content = [](const Json& j) { return j.is_string() || j.is_array(); };
  return bad("id", is_string)         ? "id"
         : bad("type", is_string)     ? "type"
         : bad("content", is_content) ? "content"
         : bad("toolCalls", is_array) ? "toolCalls"
         : bad("thoughts", is_array)  ? "thoughts"
                                      : nullptr;
}

std::vector<std::string> answered_call_ids(const Json& m) {
  std::vector<std::string> ids;
  if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) return ids;
  for (const auto& p : m["content"])
    if (p.is_object() && p.contains("functionResponse") && p["functionResponse"].is_object())
      ids.push_back(json_str(p["functionResponse"], "id"));
  return ids;
}

Converted convert_message(const Json& m, std::string* warn_type) {
  Converted out;
  const std::string type = json_str(m, "type");
  const Json parts = parts_of(m.contains("content") ? m["content"] : Json());
  if (m.contains("timestamp")) out.metadata["timestamp"] = m["timestamp"];
  if (type == "user") {
    bool all_results = !parts.empty();
    for (const auto& p : parts) {
      out.content.push_back(part_block(p));
      if (out.content.back().value("type", "") != "tool_result") all_results = false;
    }
    if (parts.empty()) out.content.push_back(text_block(""));
    out.role = all_results ? role::kTool : role::kUser;
    out.kind = kind::kMessage;
    Json extra = extra_keys(m, {"id", "timestamp", "type", "content"});
    if (!extra.empty()) out.metadata["gemini_extra"] = extra;
  } else if (type == "gemini" || type == "model") {
    out.role = role::kAssistant;
    out.kind = kind::kMessage;
    const Json calls = m.contains("toolCalls") && m["toolCalls"].is_array() ? m["toolCalls"] : Json::array();
    out.has_tool_calls = !calls.empty();
    // A rewritten turn whose parts hold the calls (or thoughts) is complete in its parts, the
    // way the CLI rebuilds its history from such a message.
    if (any_part(parts, "functionCall") || any_part(parts, "thought")) {
      for (const auto& p : parts) out.content.push_back(part_block(p));
    } else {
      Json thoughts_meta = Json::array();
      if (m.contains("thoughts") && m["thoughts"].is_array())
        for (const auto& t : m["thoughts"]) {
          // "**subject** description": the thought's text as the model wrote it and as the CLI
          // sends it back in a rebuilt history.
          const std::string subject = json_str(t, "subject"), description = json_str(t, "description");
          out.content.push_back(Json{{"type", "thinking"},
                                     {"thinking", subject.empty() ? description : "**" + subject + "** " + description}});
          thoughts_meta.push_back(extra_keys(t, {"description"}));
        }
      if (!thoughts_meta.empty()) out.metadata["thoughts"] = thoughts_meta;
      for (const auto& p : parts) {
        Json b = part_block(p);
        if (b.value("type", "") == "text" && b.value("text", "").empty() && !b.contains("gemini_signature")) continue;
        out.content.push_back(std::move(b));
      }
      for (const auto& c : calls)
        out.content.push_back(Json{{"type", "tool_use"},
                                   {"id", json_str(c, "id")},
                                   {"name", json_str(c, "name")},
                                   {"input", c.contains("args") && c["args"].is_object() ? c["args"] : Json::object()}});
    }
    if (m.contains("tokens") && !m["tokens"].is_null()) out.metadata["usage"] = m["tokens"];
    if (m.contains("model") && !m["model"].is_null()) out.metadata["model"] = m["model"];
    // toolCalls' UI fields stay in metadata (their results are the next message's content).
    Json call_meta = Json::array();
    for (const auto& c : calls) call_meta.push_back(extra_keys(c, {"args", "result"}));
    if (!call_meta.empty()) out.metadata["tool_calls"] = call_meta;
    Json extra = extra_keys(m, {"id", "timestamp", "type", "content", "thoughts", "toolCalls", "tokens", "model"});
    if (!extra.empty()) out.metadata["gemini_extra"] = extra;
  } else {
    // info, error, warning and anything newer: UI notices kept in the chain, never model input.
    out.kind = kind::kEvent;
    std::string text = message_text(m);
    out.content.push_back(text_block(text));
    out.metadata["gemini_type"] = type;
    Json extra = extra_keys(m, {"id", "timestamp", "type", "content"});
    if (!extra.empty()) out.metadata["gemini_extra"] = extra;
    if (warn_type && type != "info" && type != "error" && type != "warning") *warn_type = type;
  }
  return out;
}

Converted results_node(const Json& m) {
  Converted out;
  out.role = role::kTool;
  out.kind = kind::kMessage;
  const Json calls = m.contains("toolCalls") && m["toolCalls"].is_array() ? m["toolCalls"] : Json::array();
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
        out.content.push_back(Json{{"type", "tool_result"},
                                   {"tool_use_id", json_str(fr, "id", call_id)},
                                   {"content", rc},
                                   {"is_error", err || status_error}});
        any = true;
      }
    }
    if (!any)
      out.content.push_back(Json{{"type", "tool_result"},
                                 {"tool_use_id", call_id},
                                 {"content", "[tool call " + (status.empty() ? std::string("without result") : status) + "]"},
                                 {"is_error", status != "success"}});
    call_meta.push_back(extra_keys(c, {"name", "args", "result"}));
  }
  out.metadata["tool_calls"] = call_meta;
  return out;
}

}  // namespace ctxfold::gemini_detail
