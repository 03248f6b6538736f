// The Gemini API request encoder of a render (docs/formats/gemini.md, "Render").
#include "render/format_gemini.hpp"

#include <map>

namespace ctxfold::render_detail {
namespace {

/// "<name>__<id>" → "<id>" (Gemini CLI's stored call ids carry the tool name).
std::string wire_id(const std::string& id, const std::string& name) {
  if (!name.empty() && id.size() > name.size() + 2 && id.compare(0, name.size(), name) == 0 &&
      id.compare(name.size(), 2, "__") == 0)
    return id.substr(name.size() + 2);
  return id;
}

std::string result_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& b : content)
      if (b.is_object() && b.value("type", "") == "text") out += b.value("text", "");
  return content.is_array() ? out : dump_json(content);
}

struct GeminiEncoder {
  Json system = Json::array();
  Json contents = Json::array();
  std::map<std::string, std::string> call_names;  // tool_use id -> name

  void push(const std::string& role, Json parts) {
    if (parts.empty()) return;
    if (!contents.empty() && contents.back()["role"] == role) {
      for (auto& p : parts) contents.back()["parts"].push_back(std::move(p));
      return;
    }
    contents.push_back(Json{{"role", role}, {"parts", std::move(parts)}});
  }

  Json part(const Json& b) {
    const std::string type = b.value("type", "");
    if (type == "text") {
      std::string t = b.value("text", "");
      if (t.empty()) return nullptr;
      return Json{{"text", t}};
    }
    if (type == "image") {
      if (b.contains("data") && b["data"].is_string())
        return Json{{"inlineData", {{"mimeType", b.value("media_type", "")}, {"data", b["data"]}}}};
      return Json{{"fileData", {{"mimeType", b.value("media_type", "")}, {"fileUri", b.value("ref", "")}}}};
    }
    if (type == "tool_use") {
      const std::string id = b.value("id", ""), name = b.value("name", "");
      call_names[id] = name;
      return Json{{"functionCall",
                   {{"id", wire_id(id, name)}, {"name", name}, {"args", b.contains("input") ? b["input"] : Json::object()}}}};
    }
    if (type == "tool_result") {
      const std::string id = b.value("tool_use_id", "");
      std::string name = b.value("name", "");
      if (name.empty() && call_names.count(id)) name = call_names[id];
      Json response = Json{{b.value("is_error", false) ? "error" : "output",
                            result_text(b.contains("content") ? b["content"] : Json())}};
      return Json{{"functionResponse", {{"id", wire_id(id, name)}, {"name", name}, {"response", response}}}};
    }
    if (type == "opaque" && b.value("provider", "") == "gemini" && b.contains("data")) return b["data"];
    return nullptr;  // thinking, other providers' opaque items
  }

  Json parts(const Json& blocks, std::size_t from, std::size_t to) {
    Json out = Json::array();
    for (std::size_t i = from; i < to && i < blocks.size(); ++i) {
      Json p = part(blocks[i]);
      if (!p.is_null()) out.push_back(std::move(p));
    }
    return out;
  }

  void node(const Node& n) {
    const Json& blocks = n.content;
    if (n.role == role::kSystem) {
      for (auto& p : parts(blocks, 0, blocks.size()))
        if (p.contains("text")) system.push_back(p);
      return;
    }
    auto gm = n.metadata.find("gemini_messages");
    if (n.kind == kind::kSummary && gm != n.metadata.end() && gm->is_array()) {
      std::size_t at = 0;
      for (const auto& m : *gm) {
        std::size_t k = m.value("blocks", static_cast<std::size_t>(0));
        const std::string type = m.value("type", "user");
        push(type == "gemini" || type == "model" ? "model" : "user", parts(blocks, at, at + k));
        at += k;
      }
      return;
    }
    push(n.role == role::kAssistant ? "model" : "user", parts(blocks, 0, blocks.size()));
  }
};

}  // namespace

Json gemini_request_body(const Rendered& r) {
  GeminiEncoder e;
  for (const Node& n : r.items) e.node(n);
  Json body = Json::object();
  if (!e.system.empty()) body["systemInstruction"] = Json{{"parts", e.system}};
  body["contents"] = std::move(e.contents);
  return body;
}

}  // namespace ctxfold::render_detail
