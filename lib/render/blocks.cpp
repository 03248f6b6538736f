#include "render/blocks.hpp"

#include <fmt/format.h>

#include "tokens/estimate.hpp"

namespace ctxfold::render_detail {

std::string message_role(const Node& n) {
  if (n.kind == kind::kSummary || n.is_view()) return role::kUser;
  if (n.role.empty()) return role::kUser;
  return n.role;
}

std::optional<ImageDims> image_dims_of(const Json& block) {
  auto num = [&](const char* key) -> int {
    auto it = block.find(key);
    if (it != block.end() && it->is_number() && it->get<double>() >= 1) return static_cast<int>(it->get<double>());
    return 0;
  };
  int w = num("width"), h = num("height");
  if (w > 0 && h > 0) return ImageDims{w, h};
  if (auto it = block.find("data"); it != block.end() && it->is_string())
    return image_dimensions_base64(it->get_ref<const std::string&>());
  return std::nullopt;
}

std::string image_label(const Json& block) {
  auto d = image_dims_of(block);
  std::string mt = json_str(block, "media_type", "unknown");
  if (d) return fmt::format("[image {}x{} {}]", d->width, d->height, mt);
  return fmt::format("[image ? {}]", mt);
}

/// Plain text of a tool_result's content (string, or blocks with images as labels).
std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return content.is_null() ? std::string() : dump_json(content);
  std::string out;
  for (const auto& b : content) {
    std::string piece;
    if (b.is_string()) {
      piece = b.get<std::string>();
    } else {
      std::string type = json_str(b, "type");
      if (type == "text") piece = json_str(b, "text");
      else if (type == "image") piece = image_label(b);
      else if (type == "tool_result") piece = content_text(b.contains("content") ? b["content"] : Json());
      else continue;
    }
    if (!out.empty()) out += "\n";
    out += piece;
  }
  return out;
}

Json text_block(std::string text) { return Json{{"type", "text"}, {"text", std::move(text)}}; }

std::string tool_use_as_text(const Json& b) {
  return fmt::format("[tool_use {} {}] {}", json_str(b, "id"), json_str(b, "name"),
                     b.contains("input") ? dump_json(b["input"]) : std::string("{}"));
}

bool is_type(const Json& b, const char* t) { return b.is_object() && json_str(b, "type") == t; }

std::string joined_text(const Json& content, const char* sep) {
  std::string out;
  for (const auto& b : content) {
    std::string piece;
    if (is_type(b, "text")) piece = json_str(b, "text");
    else if (is_type(b, "image")) piece = image_label(b);
    else continue;
    if (piece.empty()) continue;
    if (!out.empty()) out += sep;
    out += piece;
  }
  return out;
}

std::optional<std::string> image_url(const Json& b) {
  std::string data = json_str(b, "data");
  if (!data.empty()) {
    if (data.rfind("data:", 0) == 0) return data;
    return fmt::format("data:{};base64,{}", json_str(b, "media_type", "image/png"), data);
  }
  std::string ref = json_str(b, "ref");
  if (ref.rfind("http://", 0) == 0 || ref.rfind("https://", 0) == 0) return ref;
  return std::nullopt;
}

std::string block_text(const Json& b) {
  if (b.is_string()) return b.get<std::string>();
  std::string type = json_str(b, "type");
  if (type == "text") return json_str(b, "text");
  if (type == "image") return image_label(b);
  if (type == "tool_use") return tool_use_as_text(b);
  if (type == "tool_result") {
    bool err = b.contains("is_error") && b["is_error"].is_boolean() && b["is_error"].get<bool>();
    return fmt::format("[tool_result {}{}]\n{}", json_str(b, "tool_use_id"), err ? " error" : "",
                       content_text(b.contains("content") ? b["content"] : Json()));
  }
  if (type == "thinking") return "[thinking]\n" + json_str(b, "thinking");
  if (type == "opaque") return fmt::format("[opaque {}]", json_str(b, "provider", "unknown"));
  return fmt::format("[{} block]", type.empty() ? std::string("unknown") : type);
}

std::int64_t text_bytes(const Json& content) {
  if (content.is_string()) return static_cast<std::int64_t>(content.get_ref<const std::string&>().size());
  if (!content.is_array()) return 0;
  std::int64_t n = 0;
  for (const auto& b : content) {
    if (!b.is_object()) continue;
    if (is_type(b, "text") && b.contains("text") && b["text"].is_string())
      n += static_cast<std::int64_t>(b["text"].get_ref<const std::string&>().size());
    else if (is_type(b, "tool_result") && b.contains("content"))
      n += text_bytes(b["content"]);
  }
  return n;
}

}  // namespace ctxfold::render_detail
