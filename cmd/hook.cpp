// `ctxfold hook AGENT`: the command an agent's hooks run (docs/commands.md "hook"). It reads the hook
// payload on stdin, imports the transcript it names into the archive (incremental, idempotent)
// and, on SessionStart after a compaction or on resume, prints the context Claude Code injects:
// the identifiers its summary left out, each with the ctxfold command that recalls it.
// `ctxfold hook install|uninstall AGENT` prints, or with --write merges into the agent's
// settings, the hooks that run it.
//
// A hook call never exits 2: Claude Code reads exit 2 as "block" (PreCompact: no compaction;
// Stop: the model is made to go on). Its failures exit 3 (bad payload, no transcript) or 4 (the
// archive cannot be written), which Claude Code reports and goes on.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "context.hpp"
#include "hook/archive.hpp"
#include "hook/payload.hpp"
#include "hook/reinject.hpp"
#include "hook/settings.hpp"
#include "session/open.hpp"
#include "store/scan.hpp"
#include "util/config.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
namespace fs = std::filesystem;

struct HookOptions {
  std::vector<std::string> words;  ///< AGENT, or install|uninstall AGENT
  std::optional<std::size_t> max_bytes;
  std::optional<std::string> config;
  bool write = false;
  std::optional<std::string> settings;
  std::string scope = "user";
  const CLI::App* app = nullptr;  ///< the top-level app: was --db given?
};

constexpr std::size_t kDefaultMaxBytes = 4000;

void check_agent(const std::string& agent) {
  if (agent == "claude-code" || agent == "codex") return;
  throw Error(Exit::usage, "hook.agent", fmt::format("unknown agent '{}'", agent), "use claude-code or codex");
}

/// The archive and the context bound: --db / CTXFOLD_DB, else the configuration's "hook" then
/// "mcp" section's "db" (so `mcp` and `hook` name one archive); "hook.maxBytes" when --max-bytes
/// is not given. Error(bad_input, "config.invalid") for a value of the wrong type.
void apply_config(Context& ctx, HookOptions& o) {
  const ConfigSource src = load_config(o.config, *ctx.env);
  const std::string where = src.path.value_or("config");
  const bool db_given = (o.app && o.app->get_option("--db")->count() > 0) || ctx.env->variable("CTXFOLD_DB");
  for (const char* name : {"hook", "mcp"}) {
    if (!src.value.contains(name)) continue;
    const Json& sec = src.value[name];
    if (!sec.is_object()) throw Error(Exit::bad_input, "config.invalid", fmt::format("{}: \"{}\" must be an object", where, name));
    if (!db_given && sec.contains("db")) {
      if (!sec["db"].is_string() || sec["db"].get<std::string>().empty())
        throw Error(Exit::bad_input, "config.invalid", fmt::format("{}: {}.db must be a non-empty string (a path)", where, name));
      std::string db = sec["db"].get<std::string>();
      if (db.rfind("~/", 0) == 0)
        if (auto home = ctx.env->variable("HOME")) db = *home + db.substr(1);
      ctx.db_path = db;
      break;
    }
  }
  if (src.value.contains("hook") && src.value["hook"].contains("maxBytes") && !o.max_bytes) {
    const Json& v = src.value["hook"]["maxBytes"];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 200 || v.get<std::int64_t>() > 1000000)
      throw Error(Exit::bad_input, "config.invalid", where + ": hook.maxBytes must be an integer in 200..1000000");
    o.max_bytes = v.get<std::size_t>();
  }
}

std::string read_stdin() {
  std::string text;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, stdin)) > 0;) {
    text.append(buf, n);
    if (text.size() > (16u << 20)) break;  // parse_hook_payload refuses it
  }
  if (std::ferror(stdin)) throw Error(Exit::environment, "hook.stdin", "cannot read the hook payload on stdin");
  return text;
}

int run_agent_hook(Context& ctx, HookOptions& o, const std::string& agent) {
  apply_config(ctx, o);
  const HookPayload p = parse_hook_payload(read_stdin());
  std::error_code ec;
  if (!fs::exists(p.transcript_path, ec)) {
    if (transcript_optional(p)) return 0;  // a new session: nothing written yet
    throw Error(Exit::bad_input, "hook.no_transcript",
                fmt::format("{} hook: the transcript '{}' does not exist; nothing was archived", p.event, p.transcript_path));
  }
  Store store = open_store(ctx.db_path, Store::Mode::read_write);
  const HookArchive a = archive_transcript(store, p, agent);
  const bool after_compaction = p.event == "SessionStart" && (p.source == "compact" || p.source == "resume");
  if (!after_compaction) return 0;
  ReinjectOptions ro;
  ro.db = runnable_database(ctx.db_path);
  ro.max_bytes = o.max_bytes.value_or(kDefaultMaxBytes);
  ro.just_compacted = p.source == "compact";
  ro.agent = agent == "codex" ? "Codex" : "Claude Code";
  const Reinjected r = reinject_context(store, a.session, ro);
  if (r.text.empty()) return 0;
  emit(Json{{"hookSpecificOutput", {{"hookEventName", "SessionStart"}, {"additionalContext", r.text}}}});
  return 0;
}

/// The settings file: --settings, else the scope's. Claude Code: user $CLAUDE_CONFIG_DIR/settings.json,
/// by default ~/.claude/settings.json; project .claude/settings.json; local
/// .claude/settings.local.json (both in the working directory). Codex: user $CODEX_HOME/hooks.json,
/// by default ~/.codex/hooks.json; project .codex/hooks.json; it has no local scope (usage error).
std::string settings_path(const Context& ctx, const HookOptions& o, const std::string& agent) {
  if (o.settings) return *o.settings;
  if (agent == "codex") {
    if (o.scope == "project") return ".codex/hooks.json";
    if (o.scope == "local")
      throw Error(Exit::usage, "hook.scope", "Codex reads hooks from user and project layers only",
                  "use --scope user or --scope project, or name the file with --settings");
    if (auto dir = ctx.env->variable("CODEX_HOME")) return *dir + "/hooks.json";
    return ctx.env->variable("HOME").value_or(".") + "/.codex/hooks.json";
  }
  if (o.scope == "project") return ".claude/settings.json";
  if (o.scope == "local") return ".claude/settings.local.json";
  if (auto dir = ctx.env->variable("CLAUDE_CONFIG_DIR")) return *dir + "/settings.json";
  return ctx.env->variable("HOME").value_or(".") + "/.claude/settings.json";
}

/// The command the hooks run: this very binary, the archive, the agent.
std::string hook_command(const Context& ctx, const HookOptions& o, const std::string& agent) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::string cmd = fmt::format("{} --db {} hook", shell_quote(ec ? "ctxfold" : exe.string()), shell_quote(runnable_database(ctx.db_path)));
  if (o.max_bytes) cmd += fmt::format(" --max-bytes {}", *o.max_bytes);
  return cmd + " " + agent;
}

std::string read_text(const std::string& path, bool& exists) {
  std::error_code ec;
  exists = fs::exists(path, ec);
  if (!exists) return {};
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(Exit::environment, "settings.read", fmt::format("cannot read '{}'", path));
  std::string text;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text;
}

int run_install(Context& ctx, HookOptions& o, bool install, const std::string& agent) {
  apply_config(ctx, o);
  const std::string path = settings_path(ctx, o, agent);
  bool exists = false;
  const std::string text = read_text(path, exists);
  const Json before = parse_settings_text(text, path);
  const std::string command = hook_command(ctx, o, agent);
  int removed = 0;
  const Json after = install ? add_hooks(before, command, agent) : remove_hooks(before, agent, removed);
  const bool changed = after != before;
  std::optional<std::string> backup;
  if (o.write && changed) {
    if (exists) backup = path + ".ctxfold-backup";
    write_settings(path, settings_text(after), backup);
  }
  Json out = {{"schema", "ctxfold.hook/1"}, {"action", install ? "install" : "uninstall"}, {"agent", agent},
              {"settings", path},         {"command", command},                          {"changed", changed},
              {"written", o.write && changed}, {"backup", backup ? Json(*backup) : Json(nullptr)},
              {"removed", removed},       {"hooks", install ? hook_fragment(command) : Json::object()}};
  emit(out);
  // Codex runs a hook someone added to hooks.json only once it is trusted (docs/commands.md "hook").
  if (install && agent == "codex" && o.write && changed)
    std::fprintf(stderr, "ctxfold: Codex runs new hooks only once trusted: open /hooks in Codex and trust them "
                         "(or pass --dangerously-bypass-hook-trust to a run you vet yourself)\n");
  return 0;
}

int run_hook(Context& ctx, HookOptions o) {
  const std::vector<std::string>& w = o.words;
  const bool manage = w[0] == "install" || w[0] == "uninstall";
  if (manage) {
    if (w.size() != 2) throw Error(Exit::usage, "hook.usage", fmt::format("{} takes one agent: ctxfold hook {} claude-code|codex", w[0], w[0]));
    check_agent(w[1]);
    return run_install(ctx, o, w[0] == "install", w[1]);
  }
  try {
    if (w.size() != 1) throw Error(Exit::usage, "hook.usage", "ctxfold hook takes one agent (claude-code, codex), or install|uninstall AGENT");
    check_agent(w[0]);
    return run_agent_hook(ctx, o, w[0]);
  } catch (const Error& e) {
    // Exit 2 would block the agent's compaction or stop: a usage error of a hook call is reported as bad input.
    if (e.exit() == Exit::usage) throw Error(Exit::bad_input, e.code(), e.what(), e.hint());
    throw;
  }
}
}  // namespace

std::function<int(Context&)> setup_hook(CLI::App& sub) {
  auto o = std::make_shared<HookOptions>();
  sub.add_option("words", o->words, "AGENT (claude-code, codex) to run as the agent's hook, or install|uninstall AGENT")
      ->required()
      ->expected(1, 2);
  sub.add_option("--max-bytes", o->max_bytes,
                 "bound of the context printed after a compaction, in bytes (default 4000)")
      ->check(CLI::Range(static_cast<std::size_t>(200), static_cast<std::size_t>(1000000)));
  sub.add_flag("--write", o->write, "install/uninstall: merge into the settings file (a backup is written first) instead of only printing");
  sub.add_option("--settings", o->settings, "install/uninstall: the settings file (default: the --scope's)");
  sub.add_option("--scope", o->scope,
                 "install/uninstall: user ($CLAUDE_CONFIG_DIR or ~/.claude/settings.json; Codex: $CODEX_HOME or "
                 "~/.codex/hooks.json), project (.claude/settings.json; .codex/hooks.json) or local "
                 "(.claude/settings.local.json; Claude Code only)")
      ->check(CLI::IsMember({"user", "project", "local"}));
  sub.add_option("--config", o->config,
                 R"(JSON file whose "hook" (else "mcp") section may name the archive ("db", used when neither --db nor CTXFOLD_DB does); "hook.maxBytes" (default: $CTXFOLD_CONFIG, then ~/.config/ctxfold/config.json))");
  o->app = sub.get_parent();
  return [o](Context& ctx) { return run_hook(ctx, *o); };
}

}  // namespace ctxfold::cli
