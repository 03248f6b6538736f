#include "forensics/tool_events.hpp"

#include <cmath>
#include <unordered_map>

#include "forensics/tool_events_detail.hpp"
#include "model/identifiers.hpp"
#include "model/patch.hpp"
#include "util/lines.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

using tool_detail::PendingCall;


/// Files larger than this are not kept as known content (the edit check then says null).
constexpr std::size_t kMaxKnownBytes = 8u << 20;

std::optional<std::string> opt_string(const Json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

/// The text a tool_result's content holds: a string, or its text blocks joined by "\n".
std::string result_text(const Json& block) {
  auto c = block.find("content");
  if (c == block.end()) return {};
  if (c->is_string()) return c->get<std::string>();
  std::string out;
  if (c->is_array())
    for (const auto& b : *c)
      if (b.is_object() && b.contains("text") && b["text"].is_string()) {
        if (!out.empty()) out += '\n';
        out += b["text"].get_ref<const std::string&>();
      }
  return out;
}

/// The number at the start of s (an optional '-', digits); nullopt when there is none.
std::optional<int> leading_int(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  bool neg = !s.empty() && s.front() == '-';
  if (neg) s.remove_prefix(1);
  std::size_t i = 0;
  long v = 0;
  while (i < s.size() && i < 9 && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  if (i == 0) return std::nullopt;
  return static_cast<int>(neg ? -v : v);
}

/// Exit code and duration a result text records, line-anchored (docs/commands.md "commands"):
/// "Exit code: N" / "Exit code N" (Codex shell, Claude Code Bash errors, after an optional
/// "Error: "), "Process exited with code N" (Codex exec_command), "Exit Code: N" (Gemini CLI, the
/// last one), "Wall time: F seconds"; a JSON output {"output":..,"metadata":{"exit_code",
/// "duration_seconds"}} (Codex apply_patch).
struct Outcome {
  std::optional<int> exit_code;
  std::optional<double> duration_ms;
  bool success_line = false;  ///< a line "Success. ..." (Codex apply_patch)
};

Outcome recorded_outcome(std::string_view text) {
  Outcome o;
  if (!text.empty() && text.front() == '{') {
    try {
      Json j = parse_json(text);
      if (j.is_object() && j.contains("metadata") && j["metadata"].is_object()) {
        const Json& m = j["metadata"];
        if (m.contains("exit_code") && m["exit_code"].is_number_integer()) o.exit_code = m["exit_code"].get<int>();
        if (m.contains("duration_seconds") && m["duration_seconds"].is_number())
          o.duration_ms = std::round(m["duration_seconds"].get<double>() * 1e6) / 1e3;
        if (j.contains("output") && j["output"].is_string()) o.success_line = j["output"].get_ref<const std::string&>().starts_with("Success.");
        return o;
      }
    } catch (const std::exception&) {
    }
  }
  int n = 0;
  bool in_output = false;
  for_each_line(text, [&](std::string_view l) {
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.starts_with("Exit Code: ")) o.exit_code = leading_int(l.substr(11));  // Gemini: after the output
    if (in_output || ++n > 8) return;
    if (l.starts_with("Error: ")) l.remove_prefix(7);
    if (l.starts_with("Exit code: ") && !o.exit_code) o.exit_code = leading_int(l.substr(11));
    else if (l.starts_with("Exit code ") && !o.exit_code) o.exit_code = leading_int(l.substr(10));
    else if (l.starts_with("Process exited with code ")) o.exit_code = leading_int(l.substr(25));
    else if (l.starts_with("Wall time: ")) {
      try {
        o.duration_ms = std::round(std::stod(std::string(l.substr(11))) * 1e6) / 1e3;
      } catch (const std::exception&) {
      }
    } else if (l.starts_with("Success.")) o.success_line = true;
    else if (l == "Output:") in_output = true;
  });
  return o;
}

/// The first non-empty line of an error or rejection, tags and "Error: " dropped, <= 200 bytes.
std::string first_line(std::string_view text) {
  std::string out;
  for_each_line(text, [&](std::string_view l) {
    std::string c = collapse_space(l);
    for (const char* tag : {"<tool_use_error>", "</tool_use_error>"})
      if (auto at = c.find(tag); at != std::string::npos) c.erase(at, std::string_view(tag).size());
    c = collapse_space(c);
    if (c.empty()) return true;
    out = std::move(c);
    return false;
  });
  if (out.size() > 200) out.resize(utf8_safe_prefix(out, 200));
  return out;
}

bool trusts_is_error(const std::string& format) {
  return format == "claude-code" || format == "anthropic" || format == "gemini" || format == "qwen" || format == "pi" ||
         format == "copilot" || format == "opencode" || format == "kilo" || format == "openhands" || format == "ctxfold" ||
         format == "append";
}

/// Replaces old by new in s (every occurrence when all); false when old is not there.
bool apply_replace(std::string& s, const std::string& old, const std::string& neu, bool all) {
  std::size_t at = s.find(old);
  if (old.empty() || at == std::string::npos) return false;
  do {
    s.replace(at, old.size(), neu);
    at = all ? s.find(old, at + neu.size()) : std::string::npos;
  } while (at != std::string::npos);
  return true;
}

}  // namespace

struct ToolEventCollector::State {
  std::string format;
  std::optional<std::string> cwd;
  bool trusted = false;
  std::vector<PendingCall> calls;
  std::unordered_map<std::string, std::size_t> by_id;
  std::unordered_map<std::string, std::string> known;  ///< normalized path -> content known now

  void on_tool_use(const Node& n, const Json& b, const std::optional<std::string>& node_cwd);
  void settle(PendingCall& c, const Node& n, const Json& b, bool single);
  void decide_result(PendingCall& c, const Node& n, const Json& b, const Json& tur, const std::string& text);
  void command_outcome(PendingCall& c, const Node& n, const Json& tur, const std::string& text);
  void cline_outcome(PendingCall& c, const std::string& text);
  void track_files(PendingCall& c, const Json& tur, const std::string& text);
  void check_edit(FileEvent& e, const PendingCall& c, const Json& tur);
  std::optional<std::string> whole_content(const PendingCall& c, const FileEvent& e) const;
};

ToolEventCollector::ToolEventCollector(std::string format, std::optional<std::string> cwd)
    : s_(std::make_unique<State>()) {
  s_->trusted = trusts_is_error(format);
  s_->format = std::move(format);
  s_->cwd = std::move(cwd);
}
ToolEventCollector::~ToolEventCollector() = default;
ToolEventCollector::ToolEventCollector(ToolEventCollector&&) noexcept = default;
ToolEventCollector& ToolEventCollector::operator=(ToolEventCollector&&) noexcept = default;

void ToolEventCollector::State::on_tool_use(const Node& n, const Json& b, const std::optional<std::string>& node_cwd) {
  std::string id = json_str(b, "id");
  if (id.empty()) id = n.id + "#" + std::to_string(calls.size());
  if (by_id.count(id)) return;  // the same call again (a repeated history): counted once
  PendingCall c;
  c.site.session = n.session;
  c.site.node = n.id;
  c.site.seq = n.seq;
  c.site.tool_use_id = id;
  c.site.tool = json_str(b, "name");
  c.site.timestamp = opt_string(n.metadata, "timestamp");
  c.site.cwd = node_cwd ? node_cwd : cwd;
  c.input = b.contains("input") ? b["input"] : Json();
  if (c.input.is_string()) {
    try {
      Json parsed = parse_json(c.input.get_ref<const std::string&>());
      if (parsed.is_object()) c.input = std::move(parsed);
    } catch (const std::exception&) {
    }
  }
  tool_detail::classify_call(c);
  if (c.files.empty() && !c.command) return;
  for (FileEvent& e : c.files) {
    if (!e.path_as_written) continue;
    e.path = normalize_path(*e.path_as_written, c.site.cwd);
    if (c.site.cwd) {
      const std::string root = normalize_path(*c.site.cwd, std::nullopt);
      if (e.path->starts_with(root + "/")) e.relative_path = e.path->substr(root.size() + 1);
    }
  }
  by_id.emplace(id, calls.size());
  calls.push_back(std::move(c));
}

void ToolEventCollector::State::decide_result(PendingCall& c, const Node& n, const Json& b, const Json& tur,
                                              const std::string& text) {
  ToolCallSite& s = c.site;
  const bool is_error = b.value("is_error", false) == true;
  bool user_rejected = text.starts_with("The user doesn't want to proceed with this tool use") ||
                       (tur.is_string() && tur.get_ref<const std::string&>().starts_with("User rejected tool use")) ||
                       text.starts_with("[Operation Cancelled]");
  if (n.metadata.contains("tool_calls") && n.metadata["tool_calls"].is_array())  // Gemini CLI status
    for (const auto& tc : n.metadata["tool_calls"])
      if (json_str(tc, "id") == s.tool_use_id && json_str(tc, "status") == "cancelled") user_rejected = true;
  bool hook_blocked = false;
  if (n.metadata.contains("hook_blocked") && n.metadata["hook_blocked"].is_array())  // Claude Code PreToolUse hook
    for (const auto& h : n.metadata["hook_blocked"])
      if (json_str(h, "tool_use_id") == s.tool_use_id) hook_blocked = true;
  if (user_rejected || hook_blocked) {
    s.result = call_result::kRejected;
    s.rejected_by = hook_blocked ? "hook" : "user";
  } else if (is_error) {
    s.result = call_result::kError;
  } else if (trusted) {
    s.result = call_result::kSuccess;
  } else {
    Outcome o = recorded_outcome(text);
    if (o.exit_code) s.result = *o.exit_code == 0 ? call_result::kSuccess : call_result::kError;
    else if (o.success_line) s.result = call_result::kSuccess;
  }
  if (s.result == call_result::kError || s.result == call_result::kRejected) {
    std::string line = first_line(text);
    if (!line.empty()) s.error = std::move(line);
  }
}

void ToolEventCollector::State::command_outcome(PendingCall& c, const Node& n, const Json& tur, const std::string& text) {
  CommandEvent& e = *c.command;
  Outcome o = recorded_outcome(text);
  e.exit_code = o.exit_code;
  e.duration_ms = o.duration_ms;
  e.output_bytes = static_cast<std::int64_t>(text.size());
  if (tur.is_object()) {  // Claude Code Bash
    if (auto out = opt_string(tur, "stdout")) e.stdout_bytes = static_cast<std::int64_t>(out->size());
    if (auto err = opt_string(tur, "stderr")) e.stderr_bytes = static_cast<std::int64_t>(err->size());
    if (tur.contains("interrupted") && tur["interrupted"].is_boolean()) e.interrupted = tur["interrupted"].get<bool>();
    if (tur.contains("backgroundTaskId")) e.background = true;
  }
  const Json* ev = n.metadata.contains("event") ? &n.metadata["event"] : nullptr;  // OpenHands observation
  if (ev && ev->is_object() && ev->contains("extras") && (*ev)["extras"].is_object()) {
    const Json& x = (*ev)["extras"];
    if (x.contains("metadata") && x["metadata"].is_object()) {
      const Json& m = x["metadata"];
      if (m.contains("exit_code") && m["exit_code"].is_number_integer()) e.exit_code = m["exit_code"].get<int>();
      if (auto wd = opt_string(m, "working_dir")) c.site.cwd = *wd;
    }
  }
  if (e.exit_code && c.site.result != call_result::kRejected) {
    c.site.result = *e.exit_code == 0 ? call_result::kSuccess : call_result::kError;
    if (*e.exit_code != 0 && !c.site.error) {
      std::string line = first_line(text);
      if (!line.empty()) c.site.error = std::move(line);
    }
  }
}

/// Cline's tool results: one record {query, result, success, error?} per command or file, as
/// the JSON text the model reads (an array, or one object; docs/formats/cline.md "Tool results").
/// The call succeeded when every record did; a read's file event takes the record whose query is
/// its path (`PATH` or `PATH:FROM-TO`). Text that holds no such record leaves the result unknown.
void ToolEventCollector::State::cline_outcome(PendingCall& c, const std::string& text) {
  Json parsed;
  try {
    parsed = parse_json(text);
  } catch (const std::exception&) {
    return;
  }
  Json list = Json::array();
  if (parsed.is_array()) list = std::move(parsed);
  else list.push_back(std::move(parsed));
  std::vector<const Json*> records;
  for (const Json& r : list)
    if (r.is_object() && r.contains("success") && r["success"].is_boolean()) records.push_back(&r);
  if (records.empty()) return;
  auto failure = [](const Json& r) {
    std::string why = first_line(json_str(r, "error"));
    return why.empty() ? first_line(json_str(r, "result")) : why;
  };
  c.site.result = call_result::kSuccess;
  for (const Json* r : records)
    if (!(*r)["success"].get<bool>()) {
      c.site.result = call_result::kError;
      if (!c.site.error) c.site.error = failure(*r);
    }
  for (FileEvent& e : c.files) {
    if (e.action != "read" || !e.path_as_written) continue;
    for (const Json* r : records) {
      const std::string q = json_str(*r, "query");
      if (q != *e.path_as_written && !q.starts_with(*e.path_as_written + ":")) continue;
      const bool ok = (*r)["success"].get<bool>();
      e.call.result = ok ? call_result::kSuccess : call_result::kError;
      if (!ok) e.call.error = failure(*r);
      break;
    }
  }
}

void ToolEventCollector::State::settle(PendingCall& c, const Node& n, const Json& b, bool single) {
  c.settled = true;
  c.site.result_node = n.id;
  static const Json kNull;
  const Json& tur = single && n.metadata.contains("tool_use_result") ? n.metadata["tool_use_result"] : kNull;
  const std::string text = result_text(b);
  decide_result(c, n, b, tur, text);
  if (format == "cline" && c.site.result == call_result::kUnknown) cline_outcome(c, text);
  if (c.command) command_outcome(c, n, tur, text);
  if (!trusted && c.site.result == call_result::kUnknown && !c.files.empty()) {
    Outcome o = recorded_outcome(text);  // Codex apply_patch: "Success. Updated the following files"
    if (o.success_line) c.site.result = call_result::kSuccess;
  }
  track_files(c, tur, text);
}

std::optional<std::string> ToolEventCollector::State::whole_content(const PendingCall& c, const FileEvent& e) const {
  const std::string& t = c.site.tool;
  if (t == "Write" || t == "write_file") return opt_string(c.input, "content");
  if (t == "str_replace_editor") return opt_string(c.input, "file_text");
  if (e.via == "patch" && e.action == "create") {
    std::string text = opt_string(c.input, "input").value_or(opt_string(c.input, "raw").value_or(""));
    if (text.empty()) text = tool_detail::shell_script(c.input).value_or("");
    if (auto files = parse_apply_patch(text))
      for (const PatchFile& f : *files)
        if (f.action == "add" && f.path == e.path_as_written) return f.hunks.empty() ? "" : f.hunks.front() + "\n";
  }
  return std::nullopt;
}

void ToolEventCollector::State::check_edit(FileEvent& e, const PendingCall& c, const Json& tur) {
  const std::string& key = *e.path;
  std::optional<std::string> before;
  if (auto orig = opt_string(tur, "originalFile")) before = std::move(orig);  // Claude Code's own record
  else if (auto k = known.find(key); k != known.end()) before = k->second;
  Json* list = e.edit.contains("edits") ? &e.edit["edits"] : nullptr;
  std::vector<Json*> edits;
  if (list) for (auto& x : *list) edits.push_back(&x);
  else edits.push_back(&e.edit);
  bool applied = before.has_value();
  std::string after = before.value_or("");
  for (Json* x : edits) {
    auto old = opt_string(*x, "old_string");
    auto neu = opt_string(*x, "new_string").value_or("");
    if (!applied || !old) {
      applied = false;
      continue;
    }
    const bool all = x->value("replace_all", false) == true || c.site.tool == "replace";
    const bool found = after.find(*old) != std::string::npos;
    (*x)["old_string_found"] = found;
    applied = found && apply_replace(after, *old, neu, all);
  }
  if (before && c.site.result != call_result::kSuccess && c.site.result != call_result::kUnknown) known[key] = *before;
  else if (applied && c.site.result == call_result::kSuccess && after.size() <= kMaxKnownBytes) known[key] = after;
  else known.erase(key);
}

void ToolEventCollector::State::track_files(PendingCall& c, const Json& tur, const std::string& text) {
  const bool ok = c.site.result == call_result::kSuccess;
  const bool failed = c.site.result == call_result::kError || c.site.result == call_result::kRejected;
  for (FileEvent& e : c.files) {
    if (e.action == "write" && tur.is_object() && json_str(tur, "type") == "create") e.action = "create";
    if (e.action == "write" && text.starts_with("Successfully created and wrote to new file")) e.action = "create";
    if (!e.path) continue;
    const std::string& key = *e.path;
    if (e.edit.is_object() && (e.edit.contains("old_string_found") || e.edit.contains("edits"))) {
      check_edit(e, c, tur);
    } else if (e.action == "read") {
      if (!ok) continue;
      const Json file = tur.is_object() && tur.contains("file") ? tur["file"] : Json();
      if (file.is_object() && file.value("startLine", 0) == 1 && file.contains("numLines") &&
          file["numLines"] == file.value("totalLines", Json())) {
        if (auto content = opt_string(file, "content"); content && content->size() <= kMaxKnownBytes) known[key] = *content;
      } else if (c.site.tool == "read_file" && format == "gemini" && !c.input.contains("offset") &&
                 !c.input.contains("limit") && text.find("IMPORTANT: The file content has been truncated") == std::string::npos &&
                 text.size() <= kMaxKnownBytes) {
        known[key] = text;
      }
    } else if (!failed) {
      auto whole = ok ? whole_content(c, e) : std::nullopt;
      if (whole && whole->size() <= kMaxKnownBytes) known[key] = *whole;
      else known.erase(key);
    }
  }
}

void ToolEventCollector::add(const Node& n) {
  if (kind::is_view(n.kind) || !n.content.is_array()) return;
  std::optional<std::string> node_cwd;
  if (n.metadata.contains("source") && n.metadata["source"].is_object()) {  // Claude Code's line envelope
    const Json& src = n.metadata["source"];
    if (src.contains("parts") && src["parts"].is_array() && !src["parts"].empty() && src["parts"][0].is_object() &&
        src["parts"][0].contains("record"))
      node_cwd = opt_string(src["parts"][0]["record"], "cwd");
  }
  std::size_t results = 0;
  for (const auto& b : n.content)
    if (b.is_object() && json_str(b, "type") == "tool_result") ++results;
  for (const auto& b : n.content) {
    if (!b.is_object()) continue;
    const std::string type = json_str(b, "type");
    if (type == "tool_use") {
      s_->on_tool_use(n, b, node_cwd);
    } else if (type == "tool_result") {
      auto it = s_->by_id.find(json_str(b, "tool_use_id"));
      if (it == s_->by_id.end() || s_->calls[it->second].settled) continue;
      s_->settle(s_->calls[it->second], n, b, results == 1);
    }
  }
}

void ToolEventCollector::finish(std::vector<FileEvent>* files, std::vector<CommandEvent>* commands) {
  for (PendingCall& c : s_->calls) {
    for (FileEvent& e : c.files) {
      ToolCallSite own = e.call;  // a result of this file's own (cline_outcome), kept
      e.call = c.site;
      if (own.result != call_result::kUnknown) {
        e.call.result = own.result;
        e.call.error = own.error;
      }
      if (files) files->push_back(std::move(e));
    }
    if (c.command && commands) {
      c.command->call = c.site;
      commands->push_back(std::move(*c.command));
    }
  }
  s_->calls.clear();
  s_->by_id.clear();
  s_->known.clear();
}

ToolEventCollector session_collector(Store& store, const std::string& session) {
  auto info = store.session(session);
  std::string format = info && info->format ? *info->format : std::string();
  std::optional<std::string> cwd = info ? opt_string(info->metadata, "cwd") : std::nullopt;
  return ToolEventCollector(std::move(format), std::move(cwd));
}

namespace {
/// Codex's event_msg exec_command_end records (kept as source records, not nodes): the exit code,
/// duration and output sizes of a command by call_id, for commands whose output item says none.
void fill_exec_command_end(Store& store, const std::string& session, std::vector<CommandEvent>& commands) {
  std::unordered_map<std::string, CommandEvent*> by_call;
  for (CommandEvent& e : commands) by_call.emplace(e.call.tool_use_id, &e);
  store.for_each_source_record(session, "event_msg/exec_command_end", [&](const Store::SourceRecord& r) {
    Json p;
    try {
      p = parse_json(r.raw).value("payload", Json());
    } catch (const std::exception&) {
      return true;
    }
    auto it = by_call.find(json_str(p, "call_id"));
    if (it == by_call.end()) return true;
    CommandEvent& e = *it->second;
    if (!e.exit_code && p.contains("exit_code") && p["exit_code"].is_number_integer()) e.exit_code = p["exit_code"].get<int>();
    const Json d = p.value("duration", Json());
    if (!e.duration_ms && d.is_object() && d.contains("secs") && d["secs"].is_number())
      e.duration_ms = d["secs"].get<double>() * 1e3 + d.value("nanos", 0.0) / 1e6;
    if (auto out = opt_string(p, "stdout"); out && !e.stdout_bytes) e.stdout_bytes = static_cast<std::int64_t>(out->size());
    if (auto err = opt_string(p, "stderr"); err && !e.stderr_bytes) e.stderr_bytes = static_cast<std::int64_t>(err->size());
    if (e.exit_code && e.call.result == call_result::kUnknown)
      e.call.result = *e.exit_code == 0 ? call_result::kSuccess : call_result::kError;
    return true;
  });
}
}  // namespace

void session_tool_events(Store& store, const std::string& session, std::int64_t as_of,
                         std::vector<FileEvent>* files, std::vector<CommandEvent>* commands) {
  ToolEventCollector col = session_collector(store, session);
  store.for_each_node(
      session,
      [&](const Node& n) {
        col.add(n);
        return true;
      },
      as_of, false);
  col.finish(files, commands);
  // Source records carry no seq: read only for the latest state, where every record is in.
  if (commands && as_of == kLatest) fill_exec_command_end(store, session, *commands);
}

std::string normalize_path(std::string_view path, const std::optional<std::string>& cwd) {
  if (path.find('\\') != std::string_view::npos || path.starts_with("~") || path.empty()) return std::string(path);
  std::string full = path.front() == '/' || !cwd || cwd->empty() ? std::string(path) : *cwd + "/" + std::string(path);
  const bool rooted = full.front() == '/';
  std::vector<std::string_view> parts;
  std::string_view rest = full;
  while (!rest.empty()) {
    std::size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") parts.pop_back();
    else if (part == ".." && rooted) continue;
    else parts.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + std::string(parts[i]);
  return out.empty() ? "." : out;
}

bool path_matches(const FileEvent& e, std::string_view query) {
  const std::string q = normalize_path(query, std::nullopt);
  for (const auto* p : {&e.path, &e.relative_path, &e.path_as_written})
    if (*p && (**p == q || **p == query)) return true;
  if (!e.path || q.empty() || q.front() == '/') return false;
  return e.path->size() > q.size() && e.path->compare(e.path->size() - q.size(), q.size(), q) == 0 &&
         (*e.path)[e.path->size() - q.size() - 1] == '/';
}

namespace {
Json opt_json(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }

void site_fields(Json& j, const ToolCallSite& s) {
  j["session"] = s.session;
  j["node"] = s.node;
  j["seq"] = s.seq;
  j["tool_use_id"] = s.tool_use_id;
  j["tool"] = s.tool;
  j["timestamp"] = opt_json(s.timestamp);
}

void result_fields(Json& j, const ToolCallSite& s) {
  j["result"] = s.result;
  j["rejected_by"] = opt_json(s.rejected_by);
  j["error"] = opt_json(s.error);
  j["result_node"] = opt_json(s.result_node);
}
}  // namespace

Json file_event_record(const FileEvent& e) {
  Json j = Json::object();
  site_fields(j, e.call);
  j["action"] = e.action;
  j["via"] = e.via;
  j["path"] = opt_json(e.path);
  j["path_as_written"] = opt_json(e.path_as_written);
  j["relative_path"] = opt_json(e.relative_path);
  j["cwd"] = opt_json(e.call.cwd);
  j["edit"] = e.edit;
  result_fields(j, e.call);
  return j;
}

Json command_event_record(const CommandEvent& e) {
  Json j = Json::object();
  site_fields(j, e.call);
  auto opt_int = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
  j["command"] = opt_json(e.command);
  j["cwd"] = opt_json(e.call.cwd);
  j["exit_code"] = opt_int(e.exit_code);
  j["duration_ms"] = opt_int(e.duration_ms);
  j["output_bytes"] = opt_int(e.output_bytes);
  j["stdout_bytes"] = opt_int(e.stdout_bytes);
  j["stderr_bytes"] = opt_int(e.stderr_bytes);
  j["interrupted"] = opt_int(e.interrupted);
  j["background"] = e.background;
  result_fields(j, e.call);
  return j;
}

}  // namespace ctxfold
