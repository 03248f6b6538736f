#include <fmt/format.h>

#include <functional>
#include <set>

#include "render/blocks.hpp"
#include "render/formats.hpp"
#include "util/digest.hpp"

namespace ctxfold::render_detail {

std::string openai_tool_call_id(const std::string& id) {
  if (id.size() <= kOpenAIToolIdMax) return id;
  return "call_" + sha256_hex(id).substr(0, kOpenAIToolIdMax - 5);
}

Json openai_tool_id_map(const Rendered& r) {
  Json out = Json::array();
  std::set<std::string> seen;
  auto note = [&](const std::string& id) {
    if (id.size() <= kOpenAIToolIdMax || !seen.insert(id).second) return;
    out.push_back(Json{{"id", openai_tool_call_id(id)}, {"original", id}});
  };
  for (const auto& m : r.messages)
    for (const auto& b : m.content) {
      if (is_type(b, "tool_use") && m.role == role::kAssistant) note(json_str(b, "id"));
      else if (is_type(b, "tool_result") && m.role == role::kTool) note(json_str(b, "tool_use_id"));
    }
  return out;
}

void openai_message(const RenderedMessage& m, const std::function<void(Json&&)>& emit) {
  if (m.role == role::kTool) {
    for (const auto& b : m.content)
      emit(Json{{"role", "tool"},
                {"tool_call_id", openai_tool_call_id(json_str(b, "tool_use_id"))},
                {"content", content_text(b.contains("content") ? b["content"] : Json())}});
    return;
  }
  if (m.role == role::kSystem) {
    std::string text = joined_text(m.content, "\n\n");
    if (!text.empty()) emit(Json{{"role", "system"}, {"content", text}});
    return;
  }
  if (m.role == role::kAssistant) {
    std::string text;
    Json calls = Json::array();
    for (const auto& b : m.content) {
      std::string piece;
      if (is_type(b, "tool_use")) {
        calls.push_back(Json{{"id", openai_tool_call_id(json_str(b, "id"))},
                             {"type", "function"},
                             {"function",
                              {{"name", json_str(b, "name")},
                               {"arguments", b.contains("input") ? dump_json(b["input"]) : std::string("{}")}}}});
        continue;
      }
      if (is_type(b, "text")) piece = json_str(b, "text");
      else if (is_type(b, "image")) piece = image_label(b);
      else continue;  // thinking, opaque: not sent to chat completions
      if (piece.empty()) continue;
      if (!text.empty()) text += "\n\n";
      text += piece;
    }
    if (text.empty() && calls.empty()) return;
    Json msg{{"role", "assistant"}, {"content", text.empty() ? Json(nullptr) : Json(text)}};
    if (!calls.empty()) msg["tool_calls"] = calls;
    emit(std::move(msg));
    return;
  }
  // user (and the summary)
  Json parts = Json::array();
  for (const auto& b : m.content) {
    if (is_type(b, "text")) {
      if (!json_str(b, "text").empty()) parts.push_back(Json{{"type", "text"}, {"text", json_str(b, "text")}});
    } else if (is_type(b, "image")) {
      if (auto url = image_url(b)) parts.push_back(Json{{"type", "image_url"}, {"image_url", {{"url", *url}}}});
      else parts.push_back(Json{{"type", "text"}, {"text", image_label(b)}});
    }
  }
  if (parts.empty()) return;
  if (parts.size() == 1 && json_str(parts[0], "type") == "text")
    emit(Json{{"role", "user"}, {"content", parts[0]["text"]}});
  else
    emit(Json{{"role", "user"}, {"content", parts}});
}

Json openai_messages(const Rendered& r) {
  Json out = Json::array();
  for (const auto& m : r.messages) openai_message(m, [&](Json&& j) { out.push_back(std::move(j)); });
  return out;
}

}  // namespace ctxfold::render_detail
