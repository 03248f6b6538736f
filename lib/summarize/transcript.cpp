#include "summarize/transcript.hpp"

#include <fmt/format.h>

#include "model/user_text.hpp"
#include "tokens/estimate.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

constexpr std::string_view kOpenTag = "<compacted-summary>";
constexpr std::string_view kCloseTag = "</compacted-summary>";
constexpr std::string_view kPreamble =
    "[Checkpoint] The earlier part of this conversation was compacted by ctxfold. What follows is a "
    "summary of it, written from the original turns; read it as established background, not as a new "
    "request. The conversation continues after it.\n\n";

std::size_t safe_suffix_start(std::string_view s, std::size_t min_start) {
  std::size_t i = min_start;
  while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  return i;
}

std::string image_notice(const Json& b) {
  auto num = [&](const char* key) -> int {
    auto it = b.find(key);
    if (it != b.end() && it->is_number() && it->get<double>() >= 1) return static_cast<int>(it->get<double>());
    return 0;
  };
  int w = num("width"), h = num("height");
  if (w <= 0 || h <= 0) {
    if (auto it = b.find("data"); it != b.end() && it->is_string())
      if (auto d = image_dimensions_base64(it->get_ref<const std::string&>())) {
        w = d->width;
        h = d->height;
      }
  }
  if (w > 0 && h > 0) return fmt::format("[image {}x{} omitted]", w, h);
  return "[image omitted]";
}

bool collapse_blank(const std::string& t) { return t.find_first_not_of(" \t\r\n") == std::string::npos; }

std::size_t bytes_for(std::int64_t tokens) { return static_cast<std::size_t>(tokens > 0 ? tokens : 1) * 4; }

void append_line(std::string& out, std::string_view piece) {
  if (piece.empty()) return;
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  out.append(piece);
}

/// Text of a tool_result's content: strings and text blocks, images as notices.
std::string result_text(const Json& c) {
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) return c.is_null() ? std::string() : dump_json(c);
  std::string out;
  for (const auto& b : c) {
    if (b.is_string()) {
      append_line(out, b.get<std::string>());
      continue;
    }
    std::string type = json_str(b, "type");
    if (type == "text") append_line(out, json_str(b, "text"));
    else if (type == "image") append_line(out, image_notice(b));
    else if (type == "tool_result") append_line(out, result_text(b.contains("content") ? b["content"] : Json()));
  }
  return out;
}

}  // namespace

std::string shorten_middle(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  const std::size_t marker_room = 48;
  std::size_t keep = max_bytes > marker_room ? max_bytes - marker_room : 0;
  std::size_t head = utf8_safe_prefix(text, keep / 2 + keep % 2);
  std::size_t tail_start = safe_suffix_start(text, text.size() - keep / 2);
  if (tail_start < head) tail_start = head;
  std::size_t omitted = tail_start - head;
  return fmt::format("{}\n[... {} characters omitted ...]\n{}", text.substr(0, head), omitted,
                     text.substr(tail_start));
}

std::string node_transcript(const Node& n, const TranscriptOptions& opts) {
  if (n.kind == kind::kEvent) return {};
  std::string label;
  if (n.is_view()) label = "[earlier summary]";
  else if (n.role == role::kAssistant) label = "[assistant]";
  else if (n.role == role::kTool) label.clear();
  else if (n.role == role::kSystem) label = "[system]";
  else label = "[user]";

  // A user message's harness text (hook output, reminders, slash-command wrappers, isMeta
  // records: model/user_text.hpp) goes under "[harness CLASS]", so no summarizer reads it as a
  // request; the label switches back to "[user]" before a typed text that follows it.
  const bool user = label == "[user]" && n.is_model_input();
  const bool meta = user && classify_user_node(n) != UserTextClass::request;
  std::string current = label;
  auto text_piece = [&](std::string& body, const std::string& text) {
    if (user && !collapse_blank(text)) {
      UserTextClass c = classify_user_text(text);
      if (meta && c == UserTextClass::request) c = classify_user_node(n);
      std::string want = c == UserTextClass::request ? std::string("[user]")
                                                     : fmt::format("[harness {}]", user_text_class_name(c));
      if (want != current) {
        if (body.empty()) label = want;
        else append_line(body, want);
        current = want;
      }
    }
    append_line(body, text);
  };
  std::string body;
  if (n.is_view()) {
    body = unframe_summary(node_text(n));
  } else if (n.content.is_string()) {
    text_piece(body, n.content.get<std::string>());
  } else if (n.content.is_array()) {
    for (const auto& b : n.content) {
      if (b.is_string()) {
        text_piece(body, b.get<std::string>());
        continue;
      }
      if (!b.is_object()) continue;
      std::string type = json_str(b, "type");
      if (type == "text") {
        text_piece(body, json_str(b, "text"));
      } else if (type == "image") {
        append_line(body, image_notice(b));
      } else if (type == "tool_use") {
        std::string input = b.contains("input") ? dump_json(b["input"]) : std::string("{}");
        append_line(body, fmt::format("[tool call {} id={}] {}", json_str(b, "name"), json_str(b, "id"),
                                      shorten_middle(input, bytes_for(opts.max_tool_input_tokens))));
      } else if (type == "tool_result") {
        bool err = b.contains("is_error") && b["is_error"].is_boolean() && b["is_error"].get<bool>();
        std::string text = result_text(b.contains("content") ? b["content"] : Json());
        append_line(body, fmt::format("[tool result id={}{}]", json_str(b, "tool_use_id"), err ? ", error" : ""));
        append_line(body, shorten_middle(text, bytes_for(opts.max_tool_result_tokens)));
        current.clear();  // a text block after a result gets its own label
      } else if (type == "thinking" || type == "opaque" || type == "redacted_thinking") {
        continue;  // hidden or encrypted reasoning is never summarized
      } else {
        append_line(body, fmt::format("[{} block]", type.empty() ? std::string("unknown") : type));
      }
    }
  }
  if (body.empty() && label.empty()) return {};
  std::string out = label;
  append_line(out, body);
  return utf8_sanitize(out);
}

std::string unframe_summary(std::string_view framed) {
  std::size_t open = framed.find(kOpenTag);
  if (open == std::string_view::npos) return std::string(framed);
  std::size_t start = open + kOpenTag.size();
  std::size_t close = framed.rfind(kCloseTag);
  if (close == std::string_view::npos || close < start) close = framed.size();
  std::string_view inner = framed.substr(start, close - start);
  while (!inner.empty() && (inner.front() == '\n' || inner.front() == ' ')) inner.remove_prefix(1);
  while (!inner.empty() && (inner.back() == '\n' || inner.back() == ' ')) inner.remove_suffix(1);
  return std::string(inner);
}

std::string frame_summary(std::string_view raw) {
  std::string out(kPreamble);
  out += kOpenTag;
  out += "\n";
  out += raw;
  out += "\n";
  out += kCloseTag;
  return out;
}

}  // namespace ctxfold
