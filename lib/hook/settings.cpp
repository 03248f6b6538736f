#include "hook/settings.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.hpp"
#include "util/json_error.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

Error invalid(const std::string& path, const std::string& what) {
  return Error(Exit::bad_input, "settings.invalid", fmt::format("{}: {}", path, what),
               "fix the file by hand (it was left as it is), or name another with --settings");
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  return w;
}

/// The program a command runs: its first shell word, unquoted when it is one quoted string.
std::string program(const std::string& command) {
  const std::size_t start = command.find_first_not_of(" \t");
  if (start == std::string::npos) return {};
  const char q = command[start];
  if (q == '\'' || q == '"') {
    const std::size_t end = command.find(q, start + 1);
    return end == std::string::npos ? std::string() : command.substr(start + 1, end - start - 1);
  }
  return command.substr(start, command.find_first_of(" \t", start) - start);
}

/// The "hooks" entries of one group that run `command`, by predicate.
template <class Pred>
int erase_hooks(Json& group, Pred pred) {
  if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) return 0;
  Json& list = group["hooks"];
  int n = 0;
  for (std::size_t i = list.size(); i-- > 0;) {
    const Json& h = list[i];
    if (h.is_object() && h.contains("command") && h["command"].is_string() && pred(h["command"].get<std::string>())) {
      list.erase(i);
      ++n;
    }
  }
  return n;
}

bool runs_exactly(const Json& groups, const std::string& command) {
  for (const Json& g : groups)
    if (g.is_object() && g.contains("hooks") && g["hooks"].is_array())
      for (const Json& h : g["hooks"])
        if (h.is_object() && h.value("command", Json()).is_string() && h["command"] == command) return true;
  return false;
}

}  // namespace

const std::vector<std::string>& installed_events() {
  static const std::vector<std::string> events = {"PreCompact", "SessionStart", "SessionEnd", "Stop"};
  return events;
}

Json hook_fragment(const std::string& command) {
  Json hooks = Json::object();
  for (const std::string& e : installed_events()) {
    Json group = Json::object();
    if (e == "PreCompact" || e == "SessionStart") group["matcher"] = "";
    group["hooks"] = Json::array({Json{{"type", "command"}, {"command", command}, {"timeout", 60}}});
    hooks[e] = Json::array({group});
  }
  return hooks;
}

bool is_ctxfold_hook(const std::string& command, const std::string& agent) {
  std::vector<std::string> w = words(command);
  if (w.size() < 3 || w[w.size() - 2] != "hook" || w.back() != agent) return false;
  return fs::path(program(command)).filename().string().rfind("ctxfold", 0) == 0;
}

Json parse_settings_text(const std::string& text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Json::object();
  Json j;
  try {
    j = parse_json(text);
  } catch (const nlohmann::json::parse_error& e) {
    const JsonErrorAt at = json_error_at(text, e);
    throw Error(Exit::bad_input, "settings.invalid",
                fmt::format("{}:{}:{}: not strict JSON (comments and trailing commas are not JSON): {}", path, at.line,
                            at.col, at.what),
                "fix the file by hand (it was left as it is), or name another with --settings");
  }
  if (!j.is_object()) throw invalid(path, "the settings are not a JSON object");
  if (j.contains("hooks")) {
    if (!j["hooks"].is_object()) throw invalid(path, "\"hooks\" is not an object");
    for (const auto& [event, groups] : j["hooks"].items())
      if (!groups.is_array()) throw invalid(path, fmt::format("\"hooks\".\"{}\" is not a list", event));
  }
  return j;
}

Json add_hooks(Json settings, const std::string& command, const std::string& agent) {
  if (!settings.contains("hooks")) settings["hooks"] = Json::object();
  Json& hooks = settings["hooks"];
  const Json fragment = hook_fragment(command);
  for (const std::string& e : installed_events()) {
    if (!hooks.contains(e)) hooks[e] = Json::array();
    Json& groups = hooks[e];
    if (runs_exactly(groups, command)) continue;
    for (std::size_t i = groups.size(); i-- > 0;)
      if (erase_hooks(groups[i], [&](const std::string& c) { return is_ctxfold_hook(c, agent); }) > 0 &&
          groups[i]["hooks"].empty())
        groups.erase(i);
    groups.push_back(fragment[e][0]);
  }
  return settings;
}

Json remove_hooks(Json settings, const std::string& agent, int& removed) {
  removed = 0;
  if (!settings.contains("hooks") || !settings["hooks"].is_object()) return settings;
  Json& hooks = settings["hooks"];
  std::vector<std::string> emptied;
  for (auto& [event, groups] : hooks.items()) {
    if (!groups.is_array()) continue;
    int here = 0;
    for (std::size_t i = groups.size(); i-- > 0;) {
      int n = erase_hooks(groups[i], [&](const std::string& c) { return is_ctxfold_hook(c, agent); });
      here += n;
      if (n > 0 && groups[i]["hooks"].empty()) groups.erase(i);
    }
    removed += here;
    // Only an event this removal emptied goes; one that was empty before stays.
    if (here > 0 && groups.empty()) emptied.push_back(event);
  }
  if (removed == 0) return settings;
  for (const std::string& e : emptied) hooks.erase(e);
  if (hooks.empty()) settings.erase("hooks");
  return settings;
}

std::string settings_text(const Json& settings) {
  return settings.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_settings(const std::string& path, const std::string& text, const std::optional<std::string>& backup) {
  std::error_code ec;
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (backup && fs::exists(p, ec)) {
    fs::copy_file(p, *backup, fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error(Exit::environment, "settings.write", fmt::format("cannot write the backup '{}': {}", *backup, ec.message()));
  }
  const std::string tmp = path + ".ctxfold-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      throw Error(Exit::environment, "settings.write", fmt::format("cannot write '{}'", tmp));
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(Exit::environment, "settings.write", fmt::format("cannot replace '{}': {}", path, ec.message()));
  }
}

}  // namespace ctxfold
