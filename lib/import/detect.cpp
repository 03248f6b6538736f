// Format detection by content sniffing (`import --format auto`).
//
// The first 4 MiB are run through a SAX pass that stops after a few hundred items and never
// builds the document: it notes the root shape, the first value's top-level keys and string
// values, and for the item array (the root array, or the root object's "messages"/"history") the
// roles, types, sources, keys and content block types it sees. When the first value is complete
// and more follows, the file is JSON Lines and the first value is its first record; when the
// first line is unreadable (NUL bytes, a fragment) later lines are tried one by one.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <functional>
#include <set>

#include "import/import.hpp"
#include "import/pi.hpp"
#include "import/opencode.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {
namespace {

constexpr std::size_t kSniffBytes = 4u << 20;
constexpr int kMaxItems = 200;
constexpr int kMaxLines = 50;

struct Sniff {
  bool root_array = false;
  bool root_object = false;
  bool root_done = false;
  bool more_after_root = false;
  std::map<std::string, std::string> top_strings;
  std::set<std::string> top_keys;
  std::set<std::string> top_array_keys;
  int items = 0;
  std::set<std::string> item_keys, roles, types, sources, block_types, block_keys;
  bool content_string = false;
  bool content_array = false;
  bool system_top = false;
};

class SniffHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit SniffHandler(Sniff& s) : s_(s) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool) override { return scalar(nullptr); }
  bool number_integer(number_integer_t) override { return scalar(nullptr); }
  bool number_unsigned(number_unsigned_t) override { return scalar(nullptr); }
  bool number_float(number_float_t, const string_t&) override { return scalar(nullptr); }
  bool string(string_t& v) override { return scalar(&v); }
  bool binary(binary_t&) override { return scalar(nullptr); }
  bool start_object(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (stack_.empty()) return true;
    Frame& f = stack_.back();
    f.key = k;
    if (f.role == Role::root) s_.top_keys.insert(k);
    else if (f.role == Role::item) s_.item_keys.insert(k);
    else if (f.role == Role::block) s_.block_keys.insert(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    if (s_.root_done) s_.more_after_root = true;
    return false;
  }

 private:
  enum class Role { root, container, item, content, block, other };
  struct Frame {
    Role role;
    bool array;
    std::string key;
  };

  bool open(bool array) {
    if (s_.root_done) {
      s_.more_after_root = true;
      return false;
    }
    Role role = Role::other;
    if (stack_.empty()) {
      role = array ? Role::container : Role::root;
      (array ? s_.root_array : s_.root_object) = true;
    } else {
      const Frame& p = stack_.back();
      if (p.role == Role::root) {
        if (array) s_.top_array_keys.insert(p.key);
        if (p.key == "system") s_.system_top = true;
        if (array && (p.key == "messages" || p.key == "history")) role = Role::container;
      } else if (p.role == Role::container && !array) {
        role = Role::item;
        if (++s_.items > kMaxItems) return false;
      } else if (p.role == Role::item && p.key == "content" && array) {
        role = Role::content;
        s_.content_array = true;
      } else if (p.role == Role::content && !array) {
        role = Role::block;
      }
    }
    stack_.push_back(Frame{role, array, {}});
    return true;
  }

  bool close() {
    if (!stack_.empty()) stack_.pop_back();
    if (stack_.empty()) s_.root_done = true;
    return true;
  }

  bool scalar(const std::string* v) {
    if (stack_.empty()) {
      s_.root_done = true;
      return true;
    }
    const Frame& f = stack_.back();
    if (f.role == Role::root) {
      if (v) s_.top_strings[f.key] = *v;
      if (f.key == "system" && v) s_.system_top = true;
    } else if (f.role == Role::item && v) {
      if (f.key == "role") s_.roles.insert(*v);
      else if (f.key == "type") s_.types.insert(*v);
      else if (f.key == "source") s_.sources.insert(*v);
      else if (f.key == "content") s_.content_string = true;
    } else if (f.role == Role::block && v && f.key == "type") {
      s_.block_types.insert(*v);
    }
    return true;
  }

  Sniff& s_;
  std::vector<Frame> stack_;
};

Sniff sniff(std::string_view text) {
  Sniff s;
  SniffHandler h(s);
  try {
    nlohmann::json::sax_parse(text.begin(), text.end(), &h);
  } catch (const std::exception&) {
  }
  return s;
}

bool intersects(const std::set<std::string>& a, std::initializer_list<const char*> b) {
  for (const char* x : b)
    if (a.count(x)) return true;
  return false;
}

/// openai or anthropic for a message array (docs/import.md "Formats"): anthropic when blocks carry
/// Anthropic-only types or a request body has a top-level system; openai when tool_calls, tool or
/// system roles or OpenAI-only parts appear; plain string content with no other sign → openai.
std::string messages_flavour(const Sniff& s) {
  bool anthropic = intersects(s.block_types, {"tool_use", "tool_result", "thinking", "redacted_thinking",
                                              "server_tool_use", "web_search_tool_result", "document"}) ||
                   (s.block_types.count("image") && s.block_keys.count("source")) || s.system_top;
  bool openai = s.item_keys.count("tool_calls") || s.item_keys.count("tool_call_id") ||
                s.item_keys.count("function_call") || intersects(s.roles, {"system", "developer", "tool", "function"}) ||
                intersects(s.block_types, {"image_url", "input_audio", "refusal", "file"});
  if (anthropic && !openai) return "anthropic";
  if (openai && !anthropic) return "openai";
  if (anthropic && openai)
    return intersects(s.block_types, {"tool_use", "tool_result"}) ? "anthropic" : "openai";
  return "openai";
}

bool is_openhands_items(const Sniff& s) {
  return s.item_keys.count("action") || s.item_keys.count("observation");
}

/// GitHub Copilot CLI's event envelope (docs/formats/copilot-cli.md): exactly type, data, id,
/// timestamp and parentId (agentId, ephemeral on some), the type a dotted event name.
bool is_copilot_event(const Sniff& s) {
  for (const char* k : {"type", "data", "id", "timestamp", "parentId"})
    if (!s.top_keys.count(k)) return false;
  for (const std::string& k : s.top_keys)
    if (k != "type" && k != "data" && k != "id" && k != "timestamp" && k != "parentId" && k != "agentId" &&
        k != "ephemeral")
      return false;
  auto t = s.top_strings.find("type");
  return t != s.top_strings.end() && t->second.find('.') != std::string::npos;
}

std::optional<std::string> classify(const Sniff& s) {
  if (s.root_array) {
    if (is_openhands_items(s)) return "openhands";
    if (!s.roles.empty() || s.item_keys.count("content")) return messages_flavour(s);
    return std::nullopt;
  }
  if (!s.root_object) return std::nullopt;
  if (s.top_strings.count("schema") && s.top_strings.at("schema").rfind("ctxfold.", 0) == 0) return "ctxfold";
  if (s.top_keys.count("type") && s.top_keys.count("payload")) return "codex";
  if (is_copilot_event(s)) return "copilot";
  // Cline's messages file: the messages array inside its session envelope (docs/formats/cline.md).
  if (s.top_array_keys.count("messages") && s.top_keys.count("sessionId") &&
      (s.top_keys.count("origin") || s.top_keys.count("agent")))
    return "cline";
  if (s.top_array_keys.count("messages") && (s.top_keys.count("sessionId") || s.top_keys.count("projectHash")) &&
      (s.types.count("gemini") || s.types.count("user") || s.items == 0))
    return "gemini";
  // Gemini CLI's JSON Lines recording: the first line is the session header (docs/formats/gemini.md).
  if (s.top_keys.count("sessionId") && s.top_keys.count("projectHash") && s.top_keys.count("startTime") &&
      !s.top_keys.count("type") && !s.top_keys.count("messages"))
    return "gemini";
  // pi's session header ({type: "session", version, id, cwd}) or one of its tree entries (id, parentId).
  if ((s.top_strings.count("type") && s.top_strings.at("type") == "session" && s.top_keys.count("version") &&
       s.top_keys.count("cwd") && s.top_keys.count("id")) ||
      (s.top_keys.count("id") && s.top_keys.count("parentId") && s.top_keys.count("type")))
    return "pi";
  static const std::set<std::string> kClaudeTypes = {"user", "assistant", "summary", "system", "progress",
                                                     "file-history-snapshot", "queue-operation", "custom-title",
                                                     "ai-title", "attachment"};
  if (s.top_keys.count("uuid") || s.top_keys.count("parentUuid") || s.top_keys.count("leafUuid") ||
      (s.top_keys.count("sessionId") && s.top_keys.count("type")) ||
      (s.top_strings.count("type") && kClaudeTypes.count(s.top_strings.at("type")) && !s.top_keys.count("role")))
    return "claude-code";
  if (s.top_array_keys.count("history") && is_openhands_items(s)) return "openhands";
  if (s.top_array_keys.count("messages")) return messages_flavour(s);
  if (s.top_keys.count("id") && (s.top_keys.count("kind") || s.top_keys.count("role") || s.top_keys.count("content")))
    return "ctxfold";
  if (s.top_keys.count("kind") || (s.top_keys.count("role") && s.top_keys.count("content"))) return "ctxfold";
  return std::nullopt;
}

/// What the records inside Claude Code's envelope (uuid, parentUuid, sessionId, type) hold, from
/// the first lines of a JSON Lines file: the first line whose content fits each format, and the
/// first `message` that fits neither (docs/import.md "Detection").
struct EnvelopeFit {
  std::int64_t claude_line = 0;  ///< message.content, or a record type only Claude Code writes
  std::int64_t qwen_line = 0;    ///< message.parts (Gemini-style), type tool_result, systemPayload
  std::int64_t misfit_line = 0;  ///< a message with neither content nor parts
};

/// Calls fn(line, record) for each JSON object among the first kMaxItems lines of view.
void each_record(std::string_view view, const std::function<void(std::int64_t, const Json&)>& fn) {
  std::size_t pos = 0;
  for (std::int64_t line = 1; line <= kMaxItems && pos < view.size(); ++line) {
    std::size_t end = view.find('\n', pos);
    if (end == std::string_view::npos) end = view.size();
    Json r = Json::parse(view.substr(pos, end - pos), nullptr, false);
    pos = end + 1;
    if (r.is_object()) fn(line, r);
  }
}

EnvelopeFit envelope_fit(std::string_view view) {
  static const std::set<std::string> kClaudeOnly = {"summary", "progress", "file-history-snapshot",
                                                    "queue-operation", "custom-title", "ai-title", "attachment"};
  EnvelopeFit fit;
  each_record(view, [&](std::int64_t line, const Json& r) {
    const Json* msg = r.contains("message") && r["message"].is_object() ? &r["message"] : nullptr;
    std::string type = json_str(r, "type");
    bool claude = (msg && msg->contains("content")) || kClaudeOnly.count(type) ||
                  (type == "system" && r.contains("content"));
    bool qwen = (msg && msg->contains("parts")) || type == "tool_result" || r.contains("systemPayload");
    if (claude && !fit.claude_line) fit.claude_line = line;
    if (qwen && !fit.qwen_line) fit.qwen_line = line;
    if (msg && !claude && !qwen && !fit.misfit_line) fit.misfit_line = line;
  });
  return fit;
}

/// claude-code or qwen when the records in Claude Code's envelope hold that client's content
/// only; otherwise an Error(bad_input) naming the file, the line and the reason.
std::string claim_envelope(std::string_view view, const std::string& name) {
  EnvelopeFit fit = envelope_fit(view);
  const std::string hint = "pass --format to say which importer reads it";
  if (fit.claude_line && fit.qwen_line)
    throw Error(Exit::bad_input, "import.ambiguous_format",
                fmt::format("{}:{}: records fit two formats: line {} holds Claude Code content (message.content), "
                            "line {} Gemini-style parts (message.parts, Qwen Code)",
                            name, std::max(fit.claude_line, fit.qwen_line), fit.claude_line, fit.qwen_line),
                hint);
  if (fit.qwen_line) return "qwen";
  if (!fit.claude_line && fit.misfit_line)
    throw Error(Exit::bad_input, "import.unknown_format",
                fmt::format("{}:{}: a record in Claude Code's envelope whose message has neither content nor parts",
                            name, fit.misfit_line),
                hint);
  return "claude-code";
}

/// pi when every record of the first lines is one pi writes; otherwise an Error(bad_input) naming
/// the file, the line and the reason (docs/import.md "Detection").
std::string claim_pi(std::string_view view, const std::string& name) {
  std::int64_t pi_line = 0, misfit_line = 0;
  std::string misfit;
  each_record(view, [&](std::int64_t line, const Json& r) {
    std::string why = pi_misfit(r);
    if (why.empty() && !pi_line) pi_line = line;
    if (!why.empty() && !misfit_line) {
      misfit_line = line;
      misfit = std::move(why);
    }
  });
  if (misfit_line)
    throw Error(Exit::bad_input, pi_line ? "import.ambiguous_format" : "import.unknown_format",
                fmt::format("{}:{}: records in pi's session envelope, but {} (line {} fits pi)", name, misfit_line, misfit,
                            pi_line),
                "pass --format to say which importer reads it");
  return "pi";
}

/// The format a file whose first readable record classify() named: records of Claude Code's or
/// pi's envelope are claimed only when their content fits.
std::string claim(std::string_view view, const std::string& name, const std::string& f) {
  if (f == "claude-code") return claim_envelope(view, name);
  if (f == "pi") return claim_pi(view, name);
  return f;
}

std::string read_prefix(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(Exit::environment, "io.open", fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  // Grown by what is read: a buffer of the whole bound, zero-filled first, cost a small file's
  // import more than its records (4 MiB written and faulted in on every call).
  std::string buf;
  char chunk[64 * 1024];
  while (buf.size() < kSniffBytes) {
    const std::size_t want = std::min(sizeof chunk, kSniffBytes - buf.size());
    const std::size_t n = std::fread(chunk, 1, want, f);
    buf.append(chunk, n);
    if (n < want) break;
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  // A read error is not an empty file: the caller reports the file as unreadable (issue 10).
  if (failed) throw Error(Exit::environment, "io.read", fmt::format("cannot read '{}': {}", path, std::strerror(err)));
  return buf;
}

}  // namespace

std::vector<std::string> import_formats() {
  return {"auto", "claude-code", "codex", "gemini", "qwen", "pi", "copilot", "cline", "opencode", "kilo", "openai", "anthropic", "openhands", "ctxfold"};
}

std::string detect_format(const std::string& path, const std::string& label) {
  const std::string& name = label.empty() ? path : label;
  // An SQLite file is told by its schema (docs/formats/opencode.md "Telling the stores apart").
  if (auto store = opencode_store_format(path)) return *store;
  std::string text = read_prefix(path);
  if (text.rfind(std::string_view("SQLite format 3\0", 16), 0) == 0)
    throw Error(Exit::bad_input, "import.unknown_format",
                fmt::format("'{}' is an SQLite database, but not an opencode or Kilo CLI session store", name),
                "ctxfold imports transcripts and the opencode / Kilo CLI stores; a ctxfold database is read with --db");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw Error(Exit::bad_input, "import.empty", fmt::format("'{}' is empty: nothing to import", name),
                "give a transcript with at least one record");
  // Skip a UTF-8 byte order mark.
  std::string_view view(text);
  if (view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);
  Sniff s = sniff(view);
  if (auto f = classify(s)) return claim(view, name, *f);
  // The first record is unreadable (NUL bytes, a fragment, glued records): try the next lines
  // of what may be JSON Lines.
  std::size_t pos = 0;
  for (int n = 0; n < kMaxLines && pos < view.size(); ++n) {
    std::size_t end = view.find('\n', pos);
    if (end == std::string_view::npos) end = view.size();
    std::string_view line = view.substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos || line.front() != '{') continue;
    Sniff ls = sniff(line);
    if (!ls.root_object || !ls.root_done) continue;
    if (auto f = classify(ls)) return claim(view, name, *f);
  }
  throw Error(Exit::bad_input, "import.unknown_format", "cannot tell the transcript format of '" + name + "'",
              "pass --format (one of: claude-code, codex, gemini, qwen, pi, copilot, cline, opencode, kilo, openai, anthropic, openhands, ctxfold)");
}

}  // namespace ctxfold
