#include "import/formats_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "import/jsonl_reader.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold::import_detail {

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Exit::environment, "io.open", "cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(Exit::environment, "io.read", "cannot read '" + path + "'");
  return std::move(ss).str();
}

std::string file_stem(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  auto strip = [&](std::string_view suffix) {
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
      return true;
    }
    return false;
  };
  if (!strip(".jsonl")) {
    if (strip(".json")) strip(".traj");
  }
  return name;
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::int64_t line_of_offset(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(byte), '\n');
}

int json_max_depth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') max_depth = std::max(max_depth, ++depth);
    else if (c == '}' || c == ']') depth = std::max(0, depth - 1);
  }
  return max_depth;
}

bool document_too_large(const std::string& path, ImportSink& sink) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size <= sink.max_record_bytes()) return false;
  sink.warn(1, "document.too_large",
            fmt::format("JSON document of {} bytes is longer than the record limit of {} bytes: not read "
                        "(--max-record-bytes raises the limit)",
                        size, sink.max_record_bytes()));
  return true;
}

std::optional<Document> parse_document(const std::string& path, ImportSink& sink) {
  Document doc;
  doc.text = read_file_bytes(path);
  if (!utf8_valid(doc.text)) {
    std::size_t replaced = 0;
    doc.text = utf8_sanitize(doc.text, &replaced);
    sink.warn(0, "utf8.invalid", std::to_string(replaced) + " invalid UTF-8 sequence(s) replaced by U+FFFD");
  }
  if (int d = json_max_depth(doc.text); d > JsonlReader::kMaxDepth) {
    sink.warn(1, "document.too_deep",
              "JSON nested " + std::to_string(d) + " levels deep (limit " + std::to_string(JsonlReader::kMaxDepth) + ")");
    return std::nullopt;
  }
  try {
    try {
      doc.value = parse_json(doc.text);
    } catch (const nlohmann::json::out_of_range&) {
      // A number beyond a double's range (`1e999`): read it as a string of its characters.
      std::string quoted;
      std::size_t first = 0;
      std::size_t n = quote_huge_numbers(doc.text, quoted, &first);
      if (n == 0) throw;
      doc.value = parse_json(quoted);
      sink.warn(line_of_offset(doc.text, first), "json.number_range",
                fmt::format("{} number(s) beyond the range of a double read as strings of their characters", n));
    }
  } catch (const nlohmann::json::out_of_range& e) {
    sink.warn(1, "document.malformed", fmt::format("malformed JSON document: {}", e.what()));
    return std::nullopt;
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    // nlohmann messages look like "[json.exception.parse_error.101] parse error at line 3, column 2: ...";
    // keep the part after the position, which names the problem.
    if (auto pos = what.find(": "); pos != std::string::npos) what = what.substr(pos + 2);
    sink.warn(line_of_offset(doc.text, byte), "document.malformed", "malformed JSON document: " + what);
    return std::nullopt;
  }
  if (auto dup = duplicate_key(doc.text)) {
    // The value read keeps the last; the whole document is kept verbatim so the first is not lost.
    sink.warn(line_of_offset(doc.text, dup->offset), "json.duplicate_key",
              fmt::format("key \"{}\" appears twice in one object: the last value is read, the document kept verbatim",
                          dup->key));
    doc.duplicate_key = true;
  }
  return doc;
}

std::vector<std::int64_t> element_lines(std::string_view text, const std::string& key) {
  // A small scanner: a stack of containers; in the target array, record the line where each
  // element starts. Root array, or the array under the root object's member `key`.
  struct Frame {
    bool is_array;
    bool target;
    bool expect_key;    // object: next string is a key
    bool expect_value;  // array: next token starts an element
  };
  std::vector<std::int64_t> lines;
  std::vector<Frame> stack;
  std::int64_t line = 1;
  std::string last_key;
  bool collecting_key = false;
  std::string key_buf;
  bool in_string = false, escape = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (escape) {
        escape = false;
        if (collecting_key) key_buf.push_back(c);
      } else if (c == '\\') {
        escape = true;
        if (collecting_key) key_buf.push_back(c);
      } else if (c == '"') {
        in_string = false;
        if (collecting_key) {
          last_key = key_buf;
          collecting_key = false;
        }
      } else if (collecting_key) {
        key_buf.push_back(c);
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    Frame* top = stack.empty() ? nullptr : &stack.back();
    if (top && top->is_array && c != ']' && c != ',') {
      if (top->expect_value && top->target) lines.push_back(line);
      top->expect_value = false;
    }
    switch (c) {
      case '"':
        in_string = true;
        if (top && !top->is_array && top->expect_key) {
          collecting_key = true;
          key_buf.clear();
          top->expect_key = false;
        }
        break;
      case '{':
      case '[': {
        bool target = false;
        if (c == '[') {
          if (stack.empty()) target = true;
          else if (stack.size() == 1 && !stack[0].is_array && last_key == key) target = true;
        }
        stack.push_back(Frame{c == '[', target, c == '{', c == '['});
        break;
      }
      case '}':
      case ']':
        if (!stack.empty()) stack.pop_back();
        break;
      case ',':
        if (top) {
          if (top->is_array) top->expect_value = true;
          else top->expect_key = true;
        }
        break;
      default:
        break;
    }
  }
  return lines;
}

Json source_meta(const std::string& format, const std::string& file, std::int64_t line, std::int64_t index) {
  Json j = Json::object();
  j["format"] = format;
  j["file"] = file;
  if (line > 0) j["line"] = line;
  if (index >= 0) j["index"] = index;
  return j;
}

Json text_block(const std::string& s) { return Json{{"type", "text"}, {"text", s}}; }

Json opaque_block(const std::string& provider, const Json& data) {
  return Json{{"type", "opaque"}, {"provider", provider}, {"data", data}};
}

Json image_from_url(const std::string& url) {
  Json b = Json::object();
  b["type"] = "image";
  // data:[<media type>][;base64],<data>
  if (url.rfind("data:", 0) == 0) {
    auto comma = url.find(',');
    if (comma != std::string::npos) {
      std::string header = url.substr(5, comma - 5);
      bool base64 = false;
      if (header.size() >= 7 && header.compare(header.size() - 7, 7, ";base64") == 0) {
        base64 = true;
        header.resize(header.size() - 7);
      }
      if (base64) {
        b["media_type"] = header.empty() ? std::string("application/octet-stream") : header;
        b["data"] = url.substr(comma + 1);
        return b;
      }
    }
  }
  b["ref"] = url;
  return b;
}

Json parse_arguments(const std::string& s, bool* parsed) {
  if (parsed) *parsed = false;
  // Only an object is taken: a text that does not open one (after a byte order mark and JSON's
  // white space) is kept raw without a parse and the exception a failed parse throws.
  const std::size_t open = s.find_first_not_of(" \t\r\n", s.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0);
  const bool may_be_object = open != std::string::npos && s[open] == '{';
  if (may_be_object && json_max_depth(s) <= JsonlReader::kMaxDepth) {
    try {
      Json v = parse_json(s);
      if (v.is_object()) {
        if (parsed) *parsed = true;
        return v;
      }
    } catch (const nlohmann::json::parse_error&) {
    }
  }
  if (s.empty()) {
    if (parsed) *parsed = true;
    return Json::object();
  }
  return Json{{"raw", s}};
}

Json extra_keys(const Json& obj, std::initializer_list<const char*> known) {
  Json out = Json::object();
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool is_known = std::any_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; });
    if (!is_known) out[it.key()] = it.value();
  }
  return out;
}

std::optional<ItemDocument> open_item_document(const std::string& path, ImportSink& sink, const std::string& format,
                                               const std::string& key, std::initializer_list<const char*> known,
                                               const std::string& what) {
  if (document_too_large(path, sink)) return std::nullopt;
  auto doc = parse_document(path, sink);
  ItemDocument d;
  d.session = file_stem(path);
  d.file = file_name(path);
  SessionInfo info;
  info.id = d.session;
  info.source = path;
  info.format = format;
  if (!doc) {
    sink.begin_session(info);
    sink.keep_record(d.session, 1, "document.malformed", read_file_bytes(path));
    return std::nullopt;
  }
  const Json& v = doc->value;
  bool rooted = v.is_array();
  bool keyed = !rooted && v.is_object() && v.contains(key) && v[key].is_array();
  if (keyed) info.metadata = extra_keys(v, known);
  sink.begin_session(info);
  if (!rooted && !keyed) {
    sink.warn(1, "document.unexpected", fmt::format("not {}: no {} array", what, key));
    sink.keep_record(d.session, 1, "document.unexpected", doc->text);
    return std::nullopt;
  }
  if (doc->duplicate_key) sink.keep_record(d.session, 1, "json.duplicate_key", doc->text);
  d.key = rooted ? std::string() : key;
  d.lines = element_lines(doc->text, key);
  d.doc = std::move(*doc);
  return d;
}

JsonlReader::Warn BadLines::warn() {
  return [this](std::int64_t line, const std::string& code, const std::string& msg) { sink_.warn(line, code, msg); };
}

JsonlReader::Bad BadLines::keep() {
  return [this](std::int64_t line, const std::string& raw) {
    if (!session_.empty()) sink_.keep_record(session_, line, "line.bad", raw);
    else held_.emplace_back(line, raw);
  };
}

void BadLines::begin(const std::string& session) {
  session_ = session;
  for (auto& [line, raw] : held_) sink_.keep_record(session_, line, "line.bad", raw);
  held_.clear();
}

}  // namespace ctxfold::import_detail
