// Anthropic Messages importer (docs/import.md): a JSON array of {role, content}, or a request
// body {system?, messages[]} (other top-level keys become session metadata). Session id = file
// stem; node ids "<session>:<index>" ("<session>:system" for a request body's system prompt).
//
// Blocks map 1:1: text, image{source base64 → media_type+data, url → ref}, tool_use,
// tool_result (its content string or converted blocks), thinking{thinking, signature};
// redacted_thinking, server tool blocks, documents and anything unknown are kept as
// opaque{provider:"anthropic"}. Keys the API does not take (Cline's modelInfo, metrics,
// reasoning_details, call_id, ids, timestamps, …) are stripped into metadata.anthropic_extra; a
// block's own extra keys (cache_control, citations, Cline's thinking summary) go to
// metadata.block_extras {"<block index>": {...}}. A user message made only of tool_result blocks
// becomes role "tool".
#include "import/formats_common.hpp"
#include "import/import.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::opaque_block;
using import_detail::source_meta;
using import_detail::text_block;

constexpr const char* kAnthropicFormat = "anthropic";

Json convert_image(const Json& b) {
  Json out = Json::object();
  out["type"] = "image";
  const Json src = b.contains("source") ? b["source"] : Json();
  std::string st = json_str(src, "type");
  if (st == "base64") {
    out["media_type"] = json_str(src, "media_type");
    out["data"] = json_str(src, "data");
  } else if (st == "url") {
    out["ref"] = json_str(src, "url");
  } else {
    return opaque_block("anthropic", b);
  }
  return out;
}

}  // namespace

namespace import_detail {

Json anthropic_block(const Json& b, Json& extras) {
  if (b.is_string()) return text_block(b.get<std::string>());
  std::string type = json_str(b, "type");
  if (type == "text") {
    extras = extra_keys(b, {"type", "text"});
    return text_block(json_str(b, "text"));
  }
  if (type == "image") {
    extras = extra_keys(b, {"type", "source"});
    return convert_image(b);
  }
  if (type == "tool_use") {
    extras = extra_keys(b, {"type", "id", "name", "input"});
    return Json{{"type", "tool_use"},
                {"id", json_str(b, "id")},
                {"name", json_str(b, "name")},
                {"input", b.contains("input") ? b["input"] : Json::object()}};
  }
  if (type == "tool_result") {
    extras = extra_keys(b, {"type", "tool_use_id", "content", "is_error"});
    Json content = b.contains("content") ? b["content"] : Json("");
    if (content.is_array()) {
      Json inner = Json::array();
      for (const auto& c : content) {
        Json ignored;
        inner.push_back(anthropic_block(c, ignored));
      }
      content = inner;
    } else if (!content.is_string()) {
      content = dump_json(content);
    }
    bool is_error = b.contains("is_error") && b["is_error"].is_boolean() && b["is_error"].get<bool>();
    return Json{{"type", "tool_result"}, {"tool_use_id", json_str(b, "tool_use_id")}, {"content", content}, {"is_error", is_error}};
  }
  if (type == "thinking") {
    extras = extra_keys(b, {"type", "thinking", "signature"});
    Json out = {{"type", "thinking"}, {"thinking", json_str(b, "thinking")}};
    if (b.contains("signature") && b["signature"].is_string()) out["signature"] = b["signature"];
    return out;
  }
  return opaque_block("anthropic", b);
}

}  // namespace import_detail

void import_anthropic_messages(const std::string& path, ImportSink& sink) {
  auto opened = import_detail::open_item_document(path, sink, kAnthropicFormat, "messages", {"messages", "system"}, "an Anthropic messages document");
  if (!opened) return;
  const std::string& session = opened->session;
  const std::string& file = opened->file;
  const std::vector<std::int64_t>& lines = opened->lines;
  const Json* messages = &opened->items();
  const Json* system = nullptr;
  if (!opened->key.empty() && opened->doc.value.contains("system") && !opened->doc.value["system"].is_null())
    system = &opened->doc.value["system"];
  std::optional<std::string> last;

  auto fill_content = [&](Node& n, const Json& content) {
    Json block_extras = Json::object();
    if (content.is_string()) {
      n.content.push_back(text_block(content.get<std::string>()));
    } else if (content.is_array()) {
      for (std::size_t k = 0; k < content.size(); ++k) {
        Json extras = Json::object();
        n.content.push_back(import_detail::anthropic_block(content[k], extras));
        if (!extras.empty()) block_extras[std::to_string(k)] = extras;
      }
    } else if (!content.is_null()) {
      n.content.push_back(opaque_block("anthropic", content));
    }
    if (!block_extras.empty()) n.metadata["block_extras"] = block_extras;
  };

  if (system) {
    Node n;
    n.id = session + ":system";
    n.session = session;
    n.role = role::kSystem;
    n.metadata["source"] = source_meta(kAnthropicFormat, file, 0);
    fill_content(n, *system);
    last = sink.add(std::move(n), 0);
  }

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
    n.metadata["source"] = source_meta(kAnthropicFormat, file, line, static_cast<std::int64_t>(i));
    std::string r = json_str(m, "role");
    fill_content(n, m.contains("content") ? m["content"] : Json());
    if (r == "user") {
      bool only_results = !n.content.empty();
      for (const auto& b : n.content)
        if (json_str(b, "type") != "tool_result") only_results = false;
      n.role = only_results ? role::kTool : role::kUser;
    } else if (r == "assistant") {
      n.role = role::kAssistant;
    } else if (r == "system") {
      n.role = role::kSystem;
    } else {
      sink.warn(line, "record.unknown_type", "unknown Anthropic message role '" + r + "' kept as an event node");
      n.kind = kind::kEvent;
      n.metadata["anthropic_role"] = r;
    }
    if (m.contains("usage")) n.metadata["usage"] = m["usage"];
    Json extra = extra_keys(m, {"role", "content", "usage"});
    if (!extra.empty()) n.metadata["anthropic_extra"] = extra;
    last = sink.add(std::move(n), line);
  }
  if (last) sink.propose_head(session, *last);
}

}  // namespace ctxfold
