#include "render/format_responses.hpp"

#include <map>

#include "render/blocks.hpp"

namespace ctxfold::render_detail {
namespace {

const Json kNoEntries = Json::array();

const Json& meta_of(const Node* n, const char* key) {
  static const Json kNull;
  if (!n || !n->metadata.is_object()) return kNull;
  auto it = n->metadata.find(key);
  return it == n->metadata.end() ? kNull : *it;
}

std::string meta_str(const Node* n, const char* key) {
  const Json& v = meta_of(n, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

/// An opaque block another encoder would drop, when it holds an OpenAI item we can send again.
bool openai_item(const Json& b) {
  return is_type(b, "opaque") && json_str(b, "provider") == "openai" && b.contains("data") && b["data"].is_object() &&
         b["data"].contains("type");
}

/// A neutral content block as a Responses content part of a message with ROLE; null when it has
/// none (thinking, other providers' opaque blocks).
Json content_part(const Json& b, const std::string& role) {
  if (b.is_string()) return Json{{"type", role == role::kAssistant ? "output_text" : "input_text"}, {"text", b}};
  if (is_type(b, "text")) {
    if (role == role::kAssistant)
      return Json{{"type", "output_text"}, {"text", json_str(b, "text")}, {"annotations", Json::array()}};
    return Json{{"type", "input_text"}, {"text", json_str(b, "text")}};
  }
  if (is_type(b, "image")) {
    if (auto url = image_url(b)) {
      Json part{{"type", "input_image"}, {"image_url", *url}};
      if (b.contains("detail")) part["detail"] = b["detail"];
      return part;
    }
    return Json{{"type", "input_text"}, {"text", image_label(b)}};
  }
  if (openai_item(b)) return b["data"];  // a part the importer could not read, kept verbatim
  if (is_type(b, "tool_use")) return Json{{"type", "input_text"}, {"text", tool_use_as_text(b)}};
  return Json();
}

/// The role a non-assistant message takes: Codex's own when the node kept it.
std::string input_role(const Node* n, const std::string& role) {
  std::string codex = meta_str(n, "codex_role");
  if (codex == "developer" || codex == "system") return codex;
  if (role == role::kSystem) return "developer";
  return role == role::kAssistant ? role : std::string(role::kUser);
}

/// The "id" Codex gave an input message, when the transcript kept it.
void put_id(Json& item, const Json& entry_or_extra) {
  if (entry_or_extra.is_object() && entry_or_extra.contains("id") && entry_or_extra["id"].is_string())
    item["id"] = entry_or_extra["id"];
}

class ResponsesEncoder {
 public:
  explicit ResponsesEncoder(const Rendered& r) : r_(r) {
    for (const auto& n : r.items) {
      by_id_.emplace(n.id, &n);
      if (!n.content.is_array()) continue;
      for (const auto& b : n.content)
        if (is_type(b, "tool_result")) result_node_.emplace(json_str(b, "tool_use_id"), &n);
    }
  }

  Json run() {
    Json body = Json::object();
    std::size_t first = 0;
    // The leading system run: "instructions", unless Codex sent it as a developer message.
    if (!r_.messages.empty() && r_.messages[0].role == role::kSystem && !r_.messages[0].ids.empty()) {
      const Node* n = node(r_.messages[0].ids.front());
      if (meta_str(n, "codex_delivery") != "developer_message" && meta_str(n, "codex_role") != "developer") {
        std::string text = joined_text(r_.messages[0].content, "\n\n");
        if (!text.empty()) body["instructions"] = text;
        first = 1;
      }
    }
    for (std::size_t i = first; i < r_.messages.size(); ++i) message(r_.messages[i]);
    body["input"] = std::move(input_);
    return body;
  }

 private:
  const Node* node(const std::string& id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

  void message(const RenderedMessage& m) {
    if (m.role == role::kAssistant) return assistant(m);
    if (m.role == role::kTool) {
      for (const auto& b : m.content) tool_output(b);
      return;
    }
    const Node* n = m.ids.empty() ? nullptr : node(m.ids.front());
    if (m.part >= 0 && meta_of(n, "replacement_history").is_array() &&
        static_cast<std::size_t>(m.part) < meta_of(n, "replacement_history").size())
      return replacement_item(m, meta_of(n, "replacement_history")[static_cast<std::size_t>(m.part)]);
    std::string role = input_role(n, m.role);
    Json parts = Json::array();
    for (const auto& b : m.content) {
      if (openai_item(b) && !json_str(b["data"], "type").empty() && json_str(b["data"], "type").rfind("input_", 0) != 0 &&
          json_str(b["data"], "type").rfind("output_", 0) != 0) {
        flush_message(role, parts, n);
        input_.push_back(b["data"]);  // an item, not a part (a compaction item of a summary)
        continue;
      }
      Json p = content_part(b, role);
      if (!p.is_null()) parts.push_back(std::move(p));
    }
    flush_message(role, parts, n);
  }

  void flush_message(const std::string& role, Json& parts, const Node* n) {
    if (parts.empty()) return;
    Json item{{"type", "message"}};
    put_id(item, meta_of(n, "codex_extra"));
    item["role"] = role;
    item["content"] = std::move(parts);
    parts = Json::array();
    input_.push_back(std::move(item));
  }

  /// One item of a Codex summary's replacement history (RenderedMessage::part), as recorded.
  void replacement_item(const RenderedMessage& m, const Json& d) {
    if (json_str(d, "type") != "message") {
      for (const auto& b : m.content)
        if (openai_item(b)) input_.push_back(b["data"]);
      return;
    }
    std::string role = json_str(d, "role", "user");
    Json item{{"type", "message"}};
    put_id(item, d);
    item["role"] = role;
    Json parts = Json::array();
    for (const auto& b : m.content) {
      Json p = content_part(b, role);
      if (!p.is_null()) parts.push_back(std::move(p));
    }
    item["content"] = std::move(parts);
    if (d.contains("phase")) item["phase"] = d["phase"];
    input_.push_back(std::move(item));
  }

  void assistant(const RenderedMessage& m) {
    std::size_t pos = 0;
    for (const auto& id : m.ids) {
      const Node* n = node(id);
      std::size_t count = n && n->content.is_array() ? n->content.size() : 0;
      const Json& entries = meta_of(n, "codex_items").is_array() ? meta_of(n, "codex_items") : kNoEntries;
      std::size_t end = std::min(m.content.size(), pos + count);
      assistant_blocks(m.content, pos, end, entries);
      pos = end;
    }
    assistant_blocks(m.content, pos, m.content.size(), kNoEntries);
  }

  /// Blocks [pos, end) of one assistant node, grouped by its codex_items entries when it has them.
  void assistant_blocks(const Json& content, std::size_t pos, std::size_t end, const Json& entries) {
    std::size_t e = 0;
    while (pos < end) {
      const Json& b = content[pos];
      const Json entry = e < entries.size() ? entries[e] : Json();
      std::string etype = json_str(entry, "type");
      if (is_type(b, "text") || is_type(b, "image")) {
        // One message: the entry's part count, else the run of text blocks.
        std::size_t parts_n = entry.contains("parts") && entry["parts"].is_number_unsigned()
                                  ? entry["parts"].get<std::size_t>()
                                  : end - pos;
        Json item{{"type", "message"}};
        if (etype == "message") {
          if (entry.contains("status")) item["status"] = entry["status"];
          put_id(item, entry);
        }
        item["role"] = "assistant";
        Json parts = Json::array();
        std::size_t k = 0;
        while (pos < end && k < parts_n && (is_type(content[pos], "text") || is_type(content[pos], "image"))) {
          Json p = content_part(content[pos], role::kAssistant);
          if (!p.is_null()) parts.push_back(std::move(p));
          ++pos, ++k;
        }
        item["content"] = std::move(parts);
        if (etype == "message" && entry.contains("phase")) item["phase"] = entry["phase"];
        input_.push_back(std::move(item));
        if (etype == "message") ++e;
        continue;
      }
      if (etype == "message") ++e;  // a message entry whose text was empty or capped away
      const Json entry2 = e < entries.size() ? entries[e] : Json();
      std::string t2 = json_str(entry2, "type");
      if (is_type(b, "tool_use")) {
        input_.push_back(call_item(b, entry2));
        if (!t2.empty()) ++e;
      } else if (is_type(b, "thinking")) {
        if (!entries.empty()) {
          Json item{{"type", "reasoning"}};
          put_id(item, entry2);
          item["summary"] = Json::array({Json{{"type", "summary_text"}, {"text", json_str(b, "thinking")}}});
          input_.push_back(std::move(item));
        }
        if (!t2.empty()) ++e;
      } else if (openai_item(b)) {
        input_.push_back(b["data"]);
        if (!t2.empty()) ++e;
      } else {
        if (t2 == "reasoning" || t2 == "web_search_call") ++e;
      }
      ++pos;
    }
  }

  Json call_item(const Json& b, const Json& entry) {
    std::string type = json_str(entry, "type", "function_call");
    std::string call_id = json_str(b, "id");
    call_types_[call_id] = type;
    const Json input = b.contains("input") ? b["input"] : Json::object();
    Json item{{"type", type}};
    if (entry.contains("status")) item["status"] = entry["status"];
    put_id(item, entry);
    if (type == "custom_tool_call") {
      item["call_id"] = call_id;
      item["name"] = json_str(b, "name");
      item["input"] = input.is_object() && input.contains("raw") && input["raw"].is_string() ? input["raw"] : Json(dump_json(input));
    } else if (type == "local_shell_call") {
      item["call_id"] = call_id;
      item["action"] = input;
    } else {
      item["type"] = "function_call";
      item["name"] = json_str(b, "name");
      item["arguments"] = entry.contains("arguments") && entry["arguments"].is_string() ? entry["arguments"].get<std::string>()
                          : input.is_object() && input.size() == 1 && input.contains("raw") && input["raw"].is_string()
                              ? input["raw"].get<std::string>()
                              : dump_json(input);
      item["call_id"] = call_id;
    }
    return item;
  }

  void tool_output(const Json& b) {
    if (!is_type(b, "tool_result")) return;
    std::string call_id = json_str(b, "tool_use_id");
    auto ct = call_types_.find(call_id);
    std::string type =
        ct != call_types_.end() && ct->second == "custom_tool_call" ? "custom_tool_call_output" : "function_call_output";
    Json item{{"type", type}};
    if (auto rn = result_node_.find(call_id); rn != result_node_.end()) put_id(item, meta_of(rn->second, "codex_extra"));
    item["call_id"] = call_id;
    const Json content = b.contains("content") ? b["content"] : Json();
    if (content.is_array()) {  // the output was content parts (text and images), not a string
      Json parts = Json::array();
      for (const auto& c : content) {
        Json p = content_part(c, role::kUser);
        if (!p.is_null()) parts.push_back(std::move(p));
      }
      item["output"] = std::move(parts);
    } else {
      item["output"] = content_text(content);
    }
    input_.push_back(std::move(item));
  }

  const Rendered& r_;
  std::map<std::string, const Node*> by_id_;
  std::map<std::string, const Node*> result_node_;
  std::map<std::string, std::string> call_types_;
  Json input_ = Json::array();
};

}  // namespace

Json responses_body(const Rendered& r) { return ResponsesEncoder(r).run(); }

}  // namespace ctxfold::render_detail
