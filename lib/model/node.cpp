#include "model/node.hpp"

#include "model/strategy_label.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"

namespace ctxfold {

Json node_to_json(const Node& n, bool with_seq) {
  Json j = Json::object();
  j["id"] = n.id;
  j["session"] = n.session;
  if (with_seq) j["seq"] = n.seq;
  j["predecessor"] = n.predecessor ? Json(*n.predecessor) : Json(nullptr);
  j["kind"] = n.kind;
  j["role"] = n.role.empty() ? Json(nullptr) : Json(n.role);
  j["content"] = n.content;
  j["metadata"] = n.metadata;
  if (n.is_view()) j["covers_ids"] = n.covers_ids;
  return j;
}

Node node_from_json(const Json& j) {
  if (!j.is_object()) throw Error(Exit::bad_input, "input.node", "a node must be a JSON object");
  Node n;
  auto str = [&](const char* key, bool required) -> std::string {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      if (required) throw Error(Exit::bad_input, "input.node", std::string("node has no \"") + key + "\"");
      return {};
    }
    if (!it->is_string())
      throw Error(Exit::bad_input, "input.node", std::string("node field \"") + key + "\" must be a string");
    return it->get<std::string>();
  };
  n.id = str("id", false);
  n.session = str("session", false);
  std::string pred = str("predecessor", false);
  if (!pred.empty()) n.predecessor = pred;
  n.kind = str("kind", false);
  if (n.kind.empty()) n.kind = kind::kMessage;
  n.role = str("role", false);
  if (auto it = j.find("content"); it != j.end() && !it->is_null()) {
    if (it->is_string())
      n.content = Json::array({Json{{"type", "text"}, {"text", it->get<std::string>()}}});
    else if (it->is_array())
      n.content = *it;
    else
      throw Error(Exit::bad_input, "input.node", "node field \"content\" must be an array of blocks or a string");
  }
  if (auto it = j.find("metadata"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw Error(Exit::bad_input, "input.node", "node field \"metadata\" must be an object");
    n.metadata = *it;
  }
  if (auto it = j.find("covers_ids"); it != j.end() && it->is_array())
    for (const auto& c : *it)
      if (c.is_string()) n.covers_ids.push_back(c.get<std::string>());
  return n;
}

std::string metadata_json(const Node& n) {
  if (n.metadata.is_object() && n.metadata.contains("covers")) {
    Json copy = n.metadata;
    copy.erase("covers");
    return dump_json(copy);
  }
  return dump_json(n.metadata);
}

std::string canonical_node(const Node& n, std::string_view content_json, std::string_view metadata_json) {
  // Byte for byte what dump_json(node_to_json(n, false)) prints, built from the already
  // serialized content and metadata so appending serializes each only once.
  std::string out;
  out.reserve(content_json.size() + metadata_json.size() + 256);
  out += "{\"id\":";
  append_json_string(out, n.id);
  out += ",\"session\":";
  append_json_string(out, n.session);
  out += ",\"predecessor\":";
  if (n.predecessor)
    append_json_string(out, *n.predecessor);
  else
    out += "null";
  out += ",\"kind\":";
  append_json_string(out, n.kind);
  out += ",\"role\":";
  if (n.role.empty())
    out += "null";
  else
    append_json_string(out, n.role);
  out += ",\"content\":";
  out += content_json;
  out += ",\"metadata\":";
  out += metadata_json;
  if (n.is_view()) {
    out += ",\"covers_ids\":";
    out += dump_json(Json(n.covers_ids));
  }
  out += "}";
  return out;
}

std::string node_digest(const Node& n) {
  return sha256_hex(canonical_node(n, dump_json(n.content), metadata_json(n)));
}

namespace {
void append_text(const Json& blocks, std::string& out) {
  if (blocks.is_string()) {
    if (!out.empty()) out.push_back('\n');
    out += blocks.get<std::string>();
    return;
  }
  if (!blocks.is_array()) return;
  for (const auto& b : blocks) {
    if (!b.is_object()) continue;
    std::string type = json_str(b, "type");
    if (type == "text") {
      if (!out.empty()) out.push_back('\n');
      out += json_str(b, "text");
    } else if (type == "tool_result" && b.contains("content")) {
      append_text(b["content"], out);
    } else if (type == "tool_use" && b.contains("input")) {
      if (!out.empty()) out.push_back('\n');
      out += json_str(b, "name") + " " + dump_json(b["input"]);
    }
  }
}
}  // namespace

std::string node_text(const Node& n) {
  std::string out;
  append_text(n.content, out);
  return out;
}

bool is_rolling_summary(const Node& n) {
  return n.kind == kind::kSummary && has_label(n.metadata, StrategyLabel::rolling);
}

bool is_user_turn(const Node& n) {
  if (n.is_view()) return false;
  if (n.role != role::kUser) return false;
  if (!n.content.is_array()) return true;
  for (const auto& b : n.content)
    if (!b.is_object() || json_str(b, "type") != "tool_result") return true;
  return n.content.empty();
}

std::vector<std::string> tool_use_ids(const Node& n) {
  std::vector<std::string> ids;
  if (!n.content.is_array()) return ids;
  for (const auto& b : n.content)
    if (b.is_object() && json_str(b, "type") == "tool_use") ids.push_back(json_str(b, "id"));
  return ids;
}

std::vector<std::string> tool_result_ids(const Node& n) {
  std::vector<std::string> ids;
  if (!n.content.is_array()) return ids;
  for (const auto& b : n.content)
    if (b.is_object() && json_str(b, "type") == "tool_result") ids.push_back(json_str(b, "tool_use_id"));
  return ids;
}

}  // namespace ctxfold
