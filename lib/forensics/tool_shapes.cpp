// The per-agent shapes of file and shell tool calls (docs/commands.md "files", "Tool shapes").
#include <set>

#include "forensics/tool_events_detail.hpp"
#include "model/identifiers.hpp"
#include "model/patch.hpp"
#include "util/digest.hpp"
#include "util/utf8.hpp"

namespace ctxfold::tool_detail {
namespace {

std::optional<std::string> str_arg(const Json& in, std::initializer_list<const char*> keys) {
  if (!in.is_object()) return std::nullopt;
  for (const char* k : keys) {
    auto it = in.find(k);
    if (it != in.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) return it->get<std::string>();
  }
  return std::nullopt;
}

Json value_or_null(const Json& in, const char* key) {
  if (!in.is_object()) return nullptr;
  auto it = in.find(key);
  return it == in.end() ? Json(nullptr) : *it;
}

void add_file(PendingCall& c, const char* action, const char* via, std::optional<std::string> path, Json edit) {
  FileEvent e;
  e.action = action;
  e.via = via;
  e.path_as_written = std::move(path);
  e.edit = std::move(edit);
  c.files.push_back(std::move(e));
}

Json string_edit(const Json& in, const char* old_key, const char* new_key) {
  return Json{{"old_string", value_or_null(in, old_key)},
              {"new_string", value_or_null(in, new_key)},
              {"replace_all", in.is_object() && in.value("replace_all", false) == true},
              {"old_string_found", nullptr}};
}

/// Codex apply_patch: one event per file of the patch, or one "unknown" event when it does not parse.
void patch_events(PendingCall& c, std::string_view text, const char* via) {
  auto files = parse_apply_patch(text);
  if (!files) {
    add_file(c, "unknown", via, std::nullopt,
             Json{{"patch_bytes", static_cast<std::int64_t>(text.size())}, {"parsed", false}});
    return;
  }
  for (const PatchFile& f : *files) {
    if (f.action == "add") {
      add_file(c, "create", via, f.path, content_digest(f.hunks.empty() ? std::string() : f.hunks.front() + "\n"));
    } else if (f.action == "delete") {
      add_file(c, "delete", via, f.path, nullptr);
    } else {
      add_file(c, "edit", via, f.path,
               Json{{"hunks", f.hunks},
                    {"added", f.added},
                    {"removed", f.removed},
                    {"move_to", f.move_to ? Json(*f.move_to) : Json(nullptr)}});
    }
  }
}

/// Splits a plain shell command into words; nullopt when it uses anything but words and quotes
/// (pipes, redirections, substitutions, several commands), except one leading "cd DIR &&".
std::optional<std::vector<std::string>> plain_words(std::string_view s, std::optional<std::string>* cd) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '\'' || ch == '"') {
      std::size_t end = s.find(ch, i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      std::string_view q = s.substr(i + 1, end - i - 1);
      if (ch == '"' && (q.find('$') != std::string_view::npos || q.find('`') != std::string_view::npos)) return std::nullopt;
      cur += q;
      in_word = true;
      i = end;
    } else if (ch == ' ' || ch == '\t') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (ch == '&' && i + 1 < s.size() && s[i + 1] == '&' && words.size() == 2 && !in_word &&
               words[0] == "cd" && !cd->has_value()) {
      *cd = words[1];
      words.clear();
      ++i;
    } else if (std::string_view("|;&<>`$(){}\n\\*?[").find(ch) != std::string_view::npos) {
      return std::nullopt;
    } else {
      cur.push_back(ch);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  if (words.empty()) return std::nullopt;
  return words;
}

/// The files a plain read (cat, nl, head, tail, sed -n, less, more, bat) or rm names.
void shell_file_events(PendingCall& c, std::string_view script) {
  std::optional<std::string> cd;
  auto words = plain_words(script, &cd);
  if (!words) return;
  static const std::set<std::string> reads = {"cat", "nl", "head", "tail", "less", "more", "bat", "sed"};
  const std::string& prog = words->front();
  const bool rm = prog == "rm";
  if (!rm && !reads.count(prog)) return;
  std::vector<std::string> files;
  bool sed_quiet = false, sed_script = false;
  for (std::size_t i = 1; i < words->size(); ++i) {
    const std::string& w = (*words)[i];
    if (w.size() > 1 && w[0] == '-') {
      if (prog == "sed" && (w == "-n" || w == "--quiet")) sed_quiet = true;
      else if (prog == "sed") return;  // -i edits in place, -e scripts: not a plain read
      if ((prog == "head" || prog == "tail") && (w == "-n" || w == "-c")) ++i;  // its value
      continue;
    }
    if (prog == "sed" && !sed_script) {
      sed_script = true;  // "5,20p"
      if (w.empty() || w.back() != 'p') return;
      continue;
    }
    files.push_back(w);
  }
  if (prog == "sed" && !sed_quiet) return;
  for (const std::string& f : files) {
    std::string path = f;
    if (cd && !path.empty() && path[0] != '/') path = *cd + "/" + path;
    add_file(c, rm ? "delete" : "read", "shell", path, nullptr);
  }
}

bool is_command_tool(const std::string& name, const Json& in) {
  static const std::set<std::string> names = {"Bash",       "run_shell_command", "shell", "shell_command",
                                              "exec_command", "local_shell",      "execute_bash", "container.exec"};
  if (names.count(name)) return true;
  if (!in.is_object() || !(in.contains("command") || in.contains("cmd"))) return false;
  std::string lower = ascii_lower(name);
  return lower.find("bash") != std::string::npos || lower.find("shell") != std::string::npos;
}

void command_call(PendingCall& c) {
  const Json& in = c.input;
  CommandEvent e;
  auto script = shell_script(in);
  if (script) e.command = collapse_space(*script);
  if (auto wd = str_arg(in, {"workdir", "working_directory", "cwd"})) c.site.cwd = *wd;
  e.background = in.is_object() && in.value("run_in_background", false) == true;
  c.command = std::move(e);
  if (!script) return;
  if (std::size_t at = script->find("*** Begin Patch"); at != std::string::npos) {
    std::string_view head = std::string_view(*script).substr(0, at);
    if (head.find("apply_patch") != std::string_view::npos) patch_events(c, *script, "patch");
    return;
  }
  shell_file_events(c, *script);
}

void openhands_editor(PendingCall& c) {
  const Json& in = c.input;
  const std::string cmd = str_arg(in, {"command"}).value_or("");
  auto path = str_arg(in, {"path"});
  if (cmd == "view") add_file(c, "read", "tool", path, nullptr);
  else if (cmd == "create") add_file(c, "create", "tool", path, content_digest(json_str(in, "file_text")));
  else if (cmd == "str_replace") add_file(c, "edit", "tool", path, string_edit(in, "old_str", "new_str"));
  else if (cmd == "insert")
    add_file(c, "edit", "tool", path, Json{{"insert_line", value_or_null(in, "insert_line")}, {"new_string", value_or_null(in, "new_str")}});
  else if (cmd == "undo_edit") add_file(c, "edit", "tool", path, Json{{"undo", true}});
}

/// Cline's read_files {files: [{path}]}, editor {path, old_text?, new_text} (no old_text: the
/// file is created) and run_commands {commands: [...]}, read as one script of its commands in
/// order, joined by "; " (docs/formats/cline.md).
void cline_call(PendingCall& c) {
  const Json& in = c.input;
  const std::string& name = c.site.tool;
  if (name == "read_files" && in.contains("files") && in["files"].is_array()) {
    for (const auto& f : in["files"]) add_file(c, "read", "tool", str_arg(f, {"path"}), nullptr);
  } else if (name == "editor") {
    if (in.contains("old_text")) add_file(c, "edit", "tool", str_arg(in, {"path"}), string_edit(in, "old_text", "new_text"));
    else add_file(c, "create", "tool", str_arg(in, {"path"}), content_digest(json_str(in, "new_text")));
  } else if (name == "run_commands" && in.contains("commands") && in["commands"].is_array()) {
    std::string script;
    for (const auto& cmd : in["commands"])
      if (cmd.is_string()) script += (script.empty() ? "" : "; ") + cmd.get<std::string>();
    c.input["command"] = script;
    command_call(c);
  }
}

void multi_edit(PendingCall& c, const char* old_key, const char* new_key) {
  Json edits = Json::array();
  if (c.input.is_object() && c.input.contains("edits") && c.input["edits"].is_array())
    for (const auto& e : c.input["edits"]) edits.push_back(string_edit(e, old_key, new_key));
  add_file(c, "edit", "tool", str_arg(c.input, {"file_path", "path"}), Json{{"edits", edits}});
}

void read_many(PendingCall& c) {
  for (const char* key : {"paths", "file_paths"}) {
    if (!c.input.is_object() || !c.input.contains(key) || !c.input[key].is_array()) continue;
    for (const auto& p : c.input[key])
      if (p.is_string() && p.get_ref<const std::string&>().find_first_of("*?[") == std::string::npos)
        add_file(c, "read", "tool", p.get<std::string>(), nullptr);
  }
}

/// The patch text of an apply_patch call: its "input", "patch" or "raw" string.
std::optional<std::string> patch_text(const Json& in) {
  if (in.is_string()) return in.get<std::string>();
  return str_arg(in, {"input", "patch", "raw"});
}

}  // namespace

Json content_digest(std::string_view content) {
  std::int64_t lines = 0;
  for (char ch : content) lines += ch == '\n';
  if (!content.empty() && content.back() != '\n') ++lines;
  return Json{{"bytes", static_cast<std::int64_t>(content.size())}, {"lines", lines}, {"sha256", sha256_hex(content)}};
}

std::optional<std::string> shell_script(const Json& in) {
  if (!in.is_object()) return std::nullopt;
  for (const char* key : {"command", "cmd"}) {
    auto it = in.find(key);
    if (it == in.end()) continue;
    if (it->is_string()) return it->get<std::string>();
    if (!it->is_array() || it->empty()) return std::nullopt;
    std::vector<std::string> argv;
    for (const auto& a : *it)
      if (a.is_string()) argv.push_back(a.get<std::string>());
    if (argv.size() >= 3) {
      std::string sh = argv[0].substr(argv[0].rfind('/') == std::string::npos ? 0 : argv[0].rfind('/') + 1);
      if ((sh == "bash" || sh == "sh" || sh == "zsh") && (argv[1] == "-c" || argv[1] == "-lc" || argv[1] == "-ic"))
        return argv.back();
    }
    std::string joined;
    for (const auto& a : argv) joined += (joined.empty() ? "" : " ") + a;
    return joined;
  }
  return std::nullopt;
}

void classify_call(PendingCall& c) {
  const std::string& name = c.site.tool;
  const Json& in = c.input;
  // opencode and Kilo name their tools read / write / edit, the path filePath (camelCase keys).
  if (name == "Read" || name == "NotebookRead" || name == "read_file" || name == "read" || name == "view") {
    add_file(c, "read", "tool", str_arg(in, {"file_path", "notebook_path", "absolute_path", "path", "filePath"}), nullptr);
  } else if (name == "Write" || name == "write_file" || name == "write") {
    add_file(c, "write", "tool", str_arg(in, {"file_path", "path", "filePath"}), content_digest(json_str(in, "content")));
  } else if (name == "edit" && in.is_object() && in.contains("edits")) {
    multi_edit(c, "oldText", "newText");  // pi: {path, edits: [{oldText, newText}]}
  } else if (name == "create") {  // Copilot CLI
    add_file(c, "write", "tool", str_arg(in, {"path"}), content_digest(json_str(in, "file_text")));
  } else if (name == "edit" && in.contains("filePath")) {
    Json edit = string_edit(in, "oldString", "newString");
    edit["replace_all"] = in.value("replaceAll", false) == true;
    add_file(c, "edit", "tool", str_arg(in, {"filePath"}), std::move(edit));
  } else if (name == "Edit" || name == "replace" || name == "edit") {
    // Copilot CLI's edit names its strings old_str / new_str.
    Json edit = in.contains("old_str") ? string_edit(in, "old_str", "new_str") : string_edit(in, "old_string", "new_string");
    if (name == "replace") {
      edit.erase("replace_all");
      edit["expected_replacements"] = value_or_null(in, "expected_replacements");
    }
    add_file(c, "edit", "tool", str_arg(in, {"file_path", "path"}), std::move(edit));
  } else if (name == "MultiEdit") {
    multi_edit(c, "old_string", "new_string");
  } else if (name == "NotebookEdit") {
    add_file(c, "edit", "tool", str_arg(in, {"notebook_path"}),
             Json{{"cell_id", value_or_null(in, "cell_id")},
                  {"edit_mode", value_or_null(in, "edit_mode")},
                  {"cell_type", value_or_null(in, "cell_type")},
                  {"new_source", value_or_null(in, "new_source")}});
  } else if (name == "read_many_files") {
    read_many(c);
  } else if (name == "read_files" || (name == "editor" && c.input.is_object() && c.input.contains("new_text")) ||
             name == "run_commands") {
    if (c.input.is_object()) cline_call(c);
  } else if (name == "str_replace_editor") {
    openhands_editor(c);
  } else if (name == "apply_patch") {
    patch_events(c, patch_text(in).value_or(""), "patch");
  } else if (is_command_tool(name, in)) {
    command_call(c);
  }
}

}  // namespace ctxfold::tool_detail
