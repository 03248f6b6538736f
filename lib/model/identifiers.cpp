#include "model/identifiers.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include <cctype>

#include "model/patch.hpp"
#include "util/json.hpp"
#include "util/lines.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {


bool path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == '-' || c == '~' || c == '+' || c == '@' || c == ':' || c == '=' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool has_known_extension(std::string_view tok) {
  static const std::set<std::string> exts = {
      "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "py", "js", "jsx", "ts", "tsx", "json", "jsonl", "md", "txt",
      "sh", "bash", "go", "rs", "java", "kt", "toml", "yaml", "yml", "sql", "rb", "php", "html", "css", "scss",
      "lock", "cfg", "ini", "xml", "csv", "cmake", "mk", "swift", "proto", "vue", "svelte", "lua", "pl", "env",
      "log", "db", "png", "jpg", "jpeg", "gif", "svg", "pdf", "zip", "gz", "tar", "patch", "diff", "ex", "exs",
      "heex", "eex", "erl", "hrl", "cs", "fs", "scala", "clj", "dart", "r", "m", "mm", "zig", "nim", "tf"};
  std::size_t slash = tok.rfind('/');
  std::string_view last = slash == std::string_view::npos ? tok : tok.substr(slash + 1);
  std::size_t dot = last.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= last.size()) return false;
  return exts.count(ascii_lower(last.substr(dot + 1))) > 0;
}

const std::set<std::string>& units() {
  static const std::set<std::string> u = {"ms",    "s",     "sec",  "secs",  "seconds", "second", "min",  "mins",
                                          "minutes", "h",   "hours", "hour", "b",       "bytes",  "kb",   "mb",
                                          "gb",    "tb",    "kib",  "mib",   "gib",     "tokens", "token", "k",
                                          "%",     "px",    "ns",   "us",    "µs",      "lines",  "files", "m"};
  return u;
}

/// "12 ms", "2.5GB", "30%": a number followed (at most one space between) by a known unit.
void scan_numbers(std::string_view line, const IdentSink& sink) {
  std::size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (!(c >= '0' && c <= '9') || (i > 0 && (std::isalnum(static_cast<unsigned char>(line[i - 1])) ||
                                                line[i - 1] == '.' || line[i - 1] == '_' || line[i - 1] == '-'))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && ((line[j] >= '0' && line[j] <= '9') || line[j] == ',' ||
                               (line[j] == '.' && j + 1 < line.size() && line[j + 1] >= '0' && line[j + 1] <= '9')))
      ++j;
    std::size_t k = j;
    if (k < line.size() && line[k] == ' ') ++k;
    std::size_t u = k;
    if (u < line.size() && line[u] == '%') {
      ++u;
    } else {
      while (u < line.size() && (std::isalpha(static_cast<unsigned char>(line[u])) ||
                                 static_cast<unsigned char>(line[u]) >= 0x80))
        ++u;
    }
    std::string unit = ascii_lower(line.substr(k, u - k));
    bool end_ok = u >= line.size() || !std::isalnum(static_cast<unsigned char>(line[u]));
    if (u > k && end_ok && units().count(unit)) {
      std::string num(line.substr(i, j - i));
      while (!num.empty() && num.back() == ',') num.pop_back();
      sink(ident::kNumber, num + (unit == "%" ? "" : " ") + std::string(line.substr(k, u - k)));
      i = u;
    } else {
      i = j;
    }
  }
}

void scan_text(std::string_view text, bool error_source, const IdentSink& sink) {
  for_each_line(text, [&](std::string_view line) {
    if (line.size() > 4000) line = line.substr(0, utf8_safe_prefix(line, 4000));
    scan_paths_and_urls(
        line, [&](std::string_view p) { sink(ident::kPath, std::string(p)); },
        [&](std::string_view u) { sink(ident::kUrl, std::string(u)); });
    scan_numbers(line, sink);
    if (error_source && is_error_line(line)) {
      std::string c = collapse_space(line);
      if (c.size() > 200) c.resize(utf8_safe_prefix(c, 200));
      if (!c.empty()) sink(ident::kError, std::move(c));
    }
  });
}

void scan_json_strings(const Json& j, const IdentSink& sink) {
  if (j.is_string()) scan_text(j.get_ref<const std::string&>(), false, sink);
  else if (j.is_structured())
    for (const auto& v : j) scan_json_strings(v, sink);
}

}  // namespace

std::string collapse_space(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

void scan_paths_and_urls(std::string_view line, const std::function<void(std::string_view)>& on_path,
                         const std::function<void(std::string_view)>& on_url) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (!path_char(line[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && path_char(line[j])) ++j;
    std::string_view tok = line.substr(i, j - i);
    i = j;
    while (!tok.empty() && (tok.back() == '.' || tok.back() == ':' || tok.back() == ',' || tok.back() == '='))
      tok.remove_suffix(1);
    while (!tok.empty() && (tok.front() == ':' || tok.front() == '=' || tok.front() == '@')) tok.remove_prefix(1);
    if (tok.size() < 3 || tok.size() > 200) continue;
    if (tok.starts_with("http:") || tok.starts_with("https:")) {
      on_url(tok);
      continue;
    }
    // Drop a trailing ":LINE" so file.cpp:12 and file.cpp name the same file.
    std::string_view path = tok;
    if (std::size_t colon = path.find(':'); colon != std::string_view::npos) path = path.substr(0, colon);
    if (path.size() < 3) continue;
    bool has_alpha = std::any_of(path.begin(), path.end(), [](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; });
    if (!has_alpha) continue;
    bool rooted = path.starts_with("/") || path.starts_with("./") || path.starts_with("../") || path.starts_with("~/");
    bool slashed = path.find('/') != std::string_view::npos && path.find("//") == std::string_view::npos;
    if ((slashed && (rooted || has_known_extension(path))) || (!slashed && has_known_extension(path)) ||
        (rooted && slashed && path.size() > 4))
      on_path(path);
  }
}

void scan_prose_paths(std::string_view line, const std::function<void(std::string_view)>& on_path,
                      const std::function<void(std::string_view)>& on_url) {
  scan_paths_and_urls(
      line,
      [&](std::string_view p) {
        const std::size_t at = static_cast<std::size_t>(p.data() - line.data());
        if (at > 0 && line[at - 1] == '<') return;  // </span>, <a/b>: markup
        if (p.starts_with("/dev/") || p.starts_with("/proc/") || p == "/dev") return;
        if (p.front() == '/' && p.find('/', 1) == std::string_view::npos && !has_known_extension(p)) return;
        if (p.find('*') != std::string_view::npos) return;
        on_path(p);
      },
      on_url);
}

void tool_argument_paths(const Json& input, const std::function<void(std::string_view)>& on_path) {
  if (!input.is_object()) return;
  for (const char* key : {"file_path", "path", "notebook_path", "filePath", "file", "filename", "absolute_path",
                          "dir_path", "directory"}) {
    auto it = input.find(key);
    if (it == input.end() || !it->is_string()) continue;
    const std::string& v = it->get_ref<const std::string&>();
    if (!v.empty() && v.size() <= 400 && v.find('*') == std::string::npos && v.find('\n') == std::string::npos)
      on_path(v);
  }
  // Codex apply_patch: the patch text is the input ("input", or {"raw"} when it was not JSON).
  for (const char* key : {"input", "patch", "raw"}) {
    auto it = input.find(key);
    if (it == input.end() || !it->is_string()) continue;
    std::string_view t = it->get_ref<const std::string&>();
    for_each_patch_header(t, [&](std::string_view, std::string_view path) { on_path(path); });
  }
  const std::string cmd = tool_command(input);
  if (!cmd.empty()) scan_prose_paths(cmd, on_path, [](std::string_view) {});
}

bool is_error_line(std::string_view line) {
  std::string l = ascii_lower(line.substr(0, 400));
  static const char* markers[] = {"error", "failed", "failure", "exception", "traceback", "fatal", "panic",
                                  "not found", "no such file", "denied", "exit code", "errno", "segmentation fault",
                                  "cannot ", "can't ", "undefined reference"};
  for (const char* m : markers)
    if (l.find(m) != std::string::npos) return true;
  return false;
}

std::string tool_command(const Json& input) {
  if (!input.is_object()) return {};
  for (const char* key : {"command", "cmd"}) {
    auto it = input.find(key);
    if (it == input.end()) continue;
    std::string cmd;
    if (it->is_string()) cmd = it->get<std::string>();
    else if (it->is_array())
      for (const auto& part : *it)
        if (part.is_string()) cmd += (cmd.empty() ? "" : " ") + part.get<std::string>();
    return collapse_space(cmd);
  }
  return {};
}

void node_identifiers(const Node& n, const IdentSink& sink) {
  if (!n.content.is_array()) return;
  const bool error_node = n.kind == kind::kEvent;
  for (const auto& b : n.content) {
    if (!b.is_object()) continue;
    std::string type = b.value("type", "");
    if (type == "text" && b.contains("text") && b["text"].is_string()) {
      scan_text(b["text"].get_ref<const std::string&>(), error_node, sink);
    } else if (type == "tool_use") {
      if (b.contains("id") && b["id"].is_string()) sink(ident::kToolCall, b["id"].get<std::string>());
      if (b.contains("input")) {
        Json input = b["input"];
        if (input.is_string()) {  // Codex: arguments are a JSON string
          try {
            input = parse_json(input.get_ref<const std::string&>());
          } catch (const std::exception&) {
          }
        }
        std::string cmd = tool_command(input);
        if (!cmd.empty()) sink(ident::kCommand, cmd);
        scan_json_strings(input, sink);
      }
    } else if (type == "tool_result") {
      if (b.contains("tool_use_id") && b["tool_use_id"].is_string())
        sink(ident::kToolCall, b["tool_use_id"].get<std::string>());
      bool err = b.value("is_error", false) == true;
      auto c = b.find("content");
      if (c == b.end()) continue;
      if (c->is_string()) scan_text(c->get_ref<const std::string&>(), true, sink);
      else if (c->is_array())
        for (const auto& x : *c)
          if (x.is_object() && x.contains("text") && x["text"].is_string())
            scan_text(x["text"].get_ref<const std::string&>(), true, sink);
      (void)err;
    }
  }
}

bool summary_keeps(std::string_view summary, const char* kind, const std::string& value) {
  if (std::strcmp(kind, ident::kPath) == 0) {
    std::string_view v = value;
    while (!v.empty() && v.back() == '/') v.remove_suffix(1);
    std::size_t slash = v.rfind('/');
    std::string_view name = slash == std::string_view::npos ? v : v.substr(slash + 1);
    if (name.empty()) name = v;
    return summary.find(name) != std::string_view::npos;
  }
  if (std::strcmp(kind, ident::kNumber) == 0) {
    if (summary.find(value) != std::string_view::npos) return true;
    std::string tight = value;
    tight.erase(std::remove(tight.begin(), tight.end(), ' '), tight.end());
    return summary.find(tight) != std::string_view::npos;
  }
  if (std::strcmp(kind, ident::kError) == 0) {
    std::string head = value.substr(0, utf8_safe_prefix(value, 60));
    return summary.find(head) != std::string_view::npos;
  }
  return summary.find(value) != std::string_view::npos;
}

}  // namespace ctxfold
