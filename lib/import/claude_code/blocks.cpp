// Claude Code importer, block conversion: content blocks, images, hook-blocked calls, persisted outputs.

#include "import/claude_code/skeleton.hpp"
#include "util/image.hpp"

namespace ctxfold::cc_import {

namespace {

std::string base64_clean_ok(const std::string& data) {
  if (data.empty()) return "empty base64 data";
  std::size_t n = 0;
  for (char c : data) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
              c == '=' || c == '-' || c == '_';
    if (c == '\n' || c == '\r' || c == ' ') continue;
    if (!ok) return "base64 data holds characters outside the alphabet";
    ++n;
  }
  if (n % 4 == 1) return "base64 data has an impossible length";
  return {};
}

}  // namespace

Json Importer::convert_image(const Json& b, std::int64_t line) {
  Json out = Json::object();
  out["type"] = "image";
  const Json* src = is_obj(b, "source") ? &b["source"] : nullptr;
  std::string stype = src ? str_at(*src, "type") : "";
  if (src && stype == "base64") {
    out["media_type"] = str_at(*src, "media_type");
    std::string data = str_at(*src, "data");
    std::string why = base64_clean_ok(data);
    std::optional<ImageDims> dims;
    if (why.empty()) {
      dims = image_dimensions_base64(data);
      if (!dims && data.size() < 16) why = "base64 data too short for an image header";
    }
    out["data"] = std::move(data);
    if (dims) {
      out["width"] = dims->width;
      out["height"] = dims->height;
    }
    if (!why.empty()) sink_.warn(line, "image.undecodable", fmt::format("image block kept undecoded: {}", why));
    return out;
  }
  if (src && stype == "url") {
    if (src->contains("media_type")) out["media_type"] = str_at(*src, "media_type");
    out["ref"] = str_at(*src, "url");
    return out;
  }
  if (src && stype == "file") {
    out["ref"] = "file:" + str_at(*src, "file_id");
    return out;
  }
  sink_.warn(line, "image.undecodable", "image block without a readable source kept as opaque");
  return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
}

Json Importer::convert_block(const Json& b, std::int64_t line, Json& extras, std::size_t index) {
  if (!b.is_object()) return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
  std::string type = str_at(b, "type");
  Json out = Json::object();
  std::set<std::string> used{"type"};
  if (type == "text") {
    out["type"] = "text";
    out["text"] = str_at(b, "text");
    used.insert("text");
  } else if (type == "thinking") {
    out["type"] = "thinking";
    out["thinking"] = str_at(b, "thinking");
    if (b.contains("signature")) out["signature"] = str_at(b, "signature");
    used.insert({"thinking", "signature"});
  } else if (type == "tool_use") {
    out["type"] = "tool_use";
    out["id"] = str_at(b, "id");
    out["name"] = str_at(b, "name");
    out["input"] = b.contains("input") ? b["input"] : Json::object();
    used.insert({"id", "name", "input"});
  } else if (type == "tool_result") {
    out["type"] = "tool_result";
    out["tool_use_id"] = str_at(b, "tool_use_id");
    Json content = b.contains("content") ? b["content"] : Json("");
    if (content.is_array()) {
      Json conv = Json::array();
      Json inner_extras = Json::array();
      for (std::size_t k = 0; k < content.size(); ++k) conv.push_back(convert_block(content[k], line, inner_extras, k));
      if (!inner_extras.empty()) {
        Json e = Json::object();
        e["index"] = index;
        e["content"] = std::move(inner_extras);
        extras.push_back(std::move(e));
      }
      content = std::move(conv);
    } else if (content.is_null()) {
      content = "";
    } else if (!content.is_string()) {
      content = dump_json(content);
    }
    out["content"] = std::move(content);
    out["is_error"] = b.value("is_error", false) == true;
    used.insert({"tool_use_id", "content", "is_error"});
  } else if (type == "image") {
    out = convert_image(b, line);
    used.insert("source");
  } else {
    return Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", b}};
  }
  Json rest = Json::object();
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!used.count(it.key())) rest[it.key()] = it.value();
  if (!rest.empty()) {
    Json e = Json::object();
    e["index"] = index;
    e["fields"] = std::move(rest);
    extras.push_back(std::move(e));
  }
  return out;
}

// A tool call a PreToolUse hook blocked: its PreToolUse hooks ran, no PostToolUse or
// PostToolUseFailure hook did (the tool never ran; a failing tool still runs the Failure hooks:
// fa812bfe lines 401, 494, 639...), and its result is an error whose toolUseResult is "Error: "
// and the hook's stderr. Claude Code 2.1.x then sends that stderr twice: as the tool_result and as
// a <system-reminder> "PreToolUse:<tool> hook blocking error from command: "<command>": <stderr>"
// that the session file does not hold (the compaction worker of fa812bfe records it for main line
// 1358: agent-acompact-70d8e7.jsonl line 8). metadata.hook_blocked names such calls, their hook
// and the PreToolUse commands (which one blocked is not recorded), unless a spliced worker record
// holds the reminder; the estimator counts the reminder (tokens/estimate.hpp).
void Importer::note_hook_blocked(const Json& content, const Json& record, Json& meta) {
  auto tur = record.find("toolUseResult");
  if (tur == record.end() || !tur->is_string() || tur->get_ref<const std::string&>().rfind("Error: ", 0) != 0) return;
  for (const auto& b : content) {
    if (!b.is_object() || str_at(b, "type") != "tool_result") continue;
    auto err = b.find("is_error");
    if (err == b.end() || !err->is_boolean() || !err->get<bool>()) continue;
    const std::uint32_t id = sk_.ids.intern(str_at(b, "tool_use_id"));
    auto h = sk_.hooks.find(id);
    if (h == sk_.hooks.end() || h->second.pre_commands.empty() || h->second.post > 0 || block_recorded_.count(id))
      continue;
    if (!meta.contains("hook_blocked")) meta["hook_blocked"] = Json::array();
    meta["hook_blocked"].push_back(Json{{"tool_use_id", str_at(b, "tool_use_id")},
                                        {"hook", h->second.pre_name},
                                        {"commands", h->second.pre_commands}});
  }
}

/// Tool outputs Claude Code stored beside the session instead of inline (a tool_result whose
/// text starts "<persisted-output>": a notice and a preview are what the model saw): the file
/// <session dir>/tool-results/<tool_use_id>.txt is read into metadata.persisted_outputs
/// [{tool_use_id, file, bytes, text}] so the archive keeps it after Claude Code deletes it; the
/// content stays as the model saw it. A file that is gone is listed with "missing": true.
Json Importer::persisted_outputs(const Json& content) {
  Json out = Json::array();
  if (!content.is_array()) return out;
  for (const auto& b : content) {
    if (!b.is_object() || str_at(b, "type") != "tool_result") continue;
    const Json& c = b.contains("content") ? b["content"] : Json();
    bool persisted = false;
    if (c.is_string()) persisted = c.get_ref<const std::string&>().rfind("<persisted-output>", 0) == 0;
    else if (c.is_array())
      for (const auto& x : c)
        if (x.is_object() && x.contains("text") && x["text"].is_string() &&
            x["text"].get_ref<const std::string&>().rfind("<persisted-output>", 0) == 0)
          persisted = true;
    if (!persisted) continue;
    const std::string id = str_at(b, "tool_use_id");
    if (id.empty() || id.find('/') != std::string::npos) continue;
    const fs::path file = results_dir_ / (id + ".txt");
    Json e{{"tool_use_id", id}, {"file", (fs::path("tool-results") / file.filename()).string()}};
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      e["missing"] = true;
    } else {
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      e["bytes"] = static_cast<std::int64_t>(text.size());
      e["text"] = utf8_sanitize(text);
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ctxfold::cc_import
