#include <fmt/format.h>

#include "render/blocks.hpp"
#include "render/formats.hpp"

namespace ctxfold::render_detail {
namespace {

Json anthropic_image(const Json& b) {
  std::string data = json_str(b, "data");
  if (!data.empty()) {
    std::string mt = json_str(b, "media_type", "image/png");
    if (data.rfind("data:", 0) == 0) {
      auto semi = data.find(';'), comma = data.find(',');
      if (semi != std::string::npos && semi > 5 && semi < comma) mt = data.substr(5, semi - 5);
      data = comma == std::string::npos ? std::string() : data.substr(comma + 1);
    }
    return Json{{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", mt}, {"data", data}}}};
  }
  std::string ref = json_str(b, "ref");
  if (ref.rfind("http://", 0) == 0 || ref.rfind("https://", 0) == 0)
    return Json{{"type", "image"}, {"source", {{"type", "url"}, {"url", ref}}}};
  return text_block(image_label(b));
}

/// tool_use.input must be an object for the Messages API: a string or other value (a Codex
/// custom tool's raw patch text) is wrapped as {"input": value} rather than lost.
Json anthropic_input(const Json& b) {
  auto it = b.find("input");
  if (it == b.end() || it->is_null()) return Json::object();
  if (it->is_object()) return *it;
  return Json{{"input", *it}};
}

/// True when text holds nothing but ASCII whitespace: the Messages API rejects such a text block
/// ("text content blocks must contain non-whitespace text").
bool blank(const std::string& text) {
  return text.find_first_not_of(" \t\n\r\f\v") == std::string::npos;
}

/// Converts neutral blocks to Anthropic content blocks; drops what the Messages API must not see
/// (empty or whitespace-only text among them).
Json anthropic_blocks(const Json& content, bool inside_result) {
  Json out = Json::array();
  if (content.is_string()) {
    if (!blank(content.get<std::string>())) out.push_back(text_block(content.get<std::string>()));
    return out;
  }
  if (!content.is_array()) return out;
  for (const auto& b : content) {
    if (b.is_string()) {
      if (!blank(b.get<std::string>())) out.push_back(text_block(b.get<std::string>()));
      continue;
    }
    std::string type = json_str(b, "type");
    if (type == "text") {
      if (!blank(json_str(b, "text"))) out.push_back(text_block(json_str(b, "text")));
    } else if (type == "image") {
      out.push_back(anthropic_image(b));
    } else if (inside_result) {
      continue;  // a tool_result's content holds only text and images
    } else if (type == "tool_use") {
      out.push_back(Json{{"type", "tool_use"},
                         {"id", json_str(b, "id")},
                         {"name", json_str(b, "name")},
                         {"input", anthropic_input(b)}});
    } else if (type == "tool_result") {
      Json res{{"type", "tool_result"}, {"tool_use_id", json_str(b, "tool_use_id")}};
      const Json c = b.contains("content") ? b["content"] : Json();
      if (c.is_string()) res["content"] = c;
      else res["content"] = anthropic_blocks(c, true);
      if (b.contains("is_error") && b["is_error"].is_boolean() && b["is_error"].get<bool>()) res["is_error"] = true;
      out.push_back(std::move(res));
    } else if (type == "thinking") {
      std::string sig = json_str(b, "signature");
      if (!sig.empty())
        out.push_back(Json{{"type", "thinking"}, {"thinking", json_str(b, "thinking")}, {"signature", sig}});
    } else if (type == "opaque") {
      const Json d = b.contains("data") ? b["data"] : Json();
      if (json_str(b, "provider") == "anthropic" && d.is_object() && json_str(d, "type") == "redacted_thinking")
        out.push_back(d);
    }
  }
  return out;
}


}  // namespace

Json AnthropicBody::system_value() const {
  if (system.empty()) return Json(nullptr);
  if (system_messages == 1 && system_blocks.size() > 1) return system_blocks;
  return Json(system);
}

void AnthropicStream::finish_message(Json& msg) {
  // tool_result blocks lead their user message (Messages API requirement), order kept otherwise.
  if (msg["role"] != "user") return;
  Json& c = msg["content"];
  Json results = Json::array(), rest = Json::array();
  for (auto& b : c) (is_type(b, "tool_result") ? results : rest).push_back(std::move(b));
  for (auto& b : rest) results.push_back(std::move(b));
  c = std::move(results);
}

void AnthropicStream::emit_pending() {
  if (pending_.is_null()) return;
  // The Messages API requires the first message to be a user turn; a context that starts with an
  // assistant turn (a source excerpt whose earlier turns were never written) gets a marked
  // placeholder rather than an invalid request.
  if (!emitted_ && pending_["role"] == "assistant") {
    Json placeholder{{"role", "user"},
                     {"content", Json::array({Json{{"type", "text"},
                                                   {"text", "[ctxfold: the source holds no earlier user turn]"}}})}};
    emit_(std::move(placeholder));
  }
  finish_message(pending_);
  emitted_ = true;
  emit_(std::move(pending_));
  pending_ = Json();
}

void AnthropicStream::add(const RenderedMessage& m) {
  Json blocks;
  if (m.role == role::kSystem) {
    std::string text = joined_text(m.content, "\n\n");
    if (text.empty()) return;
    if (!started_) {
      if (!body_.system.empty()) body_.system += "\n\n";
      body_.system += text;
      ++body_.system_messages;
      for (const auto& b : m.content)
        if (is_type(b, "text") && !json_str(b, "text").empty()) body_.system_blocks.push_back(text_block(json_str(b, "text")));
      return;
    }
    // A system message after the conversation began (a Codex developer message mid-session)
    // stays where it is, as marked user text: hoisting it into "system" would change the
    // request's prefix when it is appended (docs/invariants.md "I10", prompt-cache stability).
    blocks = Json::array({Json{{"type", "text"}, {"text", std::string(kMidSystemPrefix) + text}}});
  }
  std::string role = m.role == role::kAssistant ? "assistant" : "user";
  if (m.role != role::kSystem) blocks = anthropic_blocks(m.content, false);
  if (blocks.empty()) return;
  started_ = true;
  if (!pending_.is_null() && pending_["role"] == role) {
    for (auto& b : blocks) pending_["content"].push_back(std::move(b));
    return;
  }
  emit_pending();
  pending_ = Json{{"role", role}, {"content", std::move(blocks)}};
}

AnthropicBody anthropic_body(const Rendered& r) {
  Json messages = Json::array();
  AnthropicStream stream([&](Json&& m) { messages.push_back(std::move(m)); });
  for (const auto& m : r.messages) stream.add(m);
  AnthropicBody body = stream.finish();
  body.messages = std::move(messages);
  return body;
}

AnthropicBody anthropic_system(const Rendered& r) {
  AnthropicStream stream([](Json&&) {});
  for (const auto& m : r.messages) {
    stream.add(m);
    if (stream.started()) break;  // the leading system run is over
  }
  return stream.finish();
}

AnthropicBody AnthropicStream::finish() {
  emit_pending();
  return std::move(body_);
}

}  // namespace ctxfold::render_detail
