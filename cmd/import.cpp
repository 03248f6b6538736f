#include <unistd.h>

#include "context.hpp"
#include "import/home.hpp"
#include "import/import.hpp"
#include "recall/text_packs.hpp"
#include "util/error.hpp"
#include "progress.hpp"

namespace ctxfold::cli {

namespace {
struct ImportOptionsCli {
  std::vector<std::string> paths;
  ImportOptions opts;
  std::string from;
  bool no_progress = false;
  bool follow_symlinks = false;
};

Json sessions_json(const ImportResult& r) {
  Json out = Json::array();
  for (const auto& s : r.sessions)
    out.push_back({{"session", s.session},
                   {"source", s.source},
                   {"format", s.format},
                   {"nodes_added", s.nodes_added},
                   {"nodes_skipped", s.nodes_skipped},
                   {"head", s.head ? Json(*s.head) : Json(nullptr)}});
  return out;
}

Json warnings_json(const ImportResult& r) {
  Json out = Json::array();
  for (const auto& w : r.warnings) {
    out.push_back({{"file", w.file}, {"line", w.line}, {"code", w.code}, {"message", w.message}});
    warn(w.file + ":" + std::to_string(w.line) + ": " + w.message + " (" + w.code + ")");
  }
  return out;
}

int run_home(Context& ctx, const ImportOptionsCli& o) {
  if (o.paths.size() > 1)
    throw Error(Exit::usage, "import.from", "--from takes at most one folder",
                "name the agent home (or one folder under it), or none for the agent's default roots");
  HomeOptions ho;
  ho.from = o.from;
  if (!o.paths.empty()) ho.dir = o.paths.front();
  ho.env = ctx.env;
  ho.follow_symlinks = o.follow_symlinks;
  ho.max_record_bytes = o.opts.max_record_bytes;
  Progress bar("import");  // drawn only on a terminal, erased at the end
  if (!o.no_progress && isatty(STDERR_FILENO))
    ho.progress = [&bar](std::int64_t done, std::int64_t total, const std::string& file) {
      bar.update(done, total, file);
    };
  HomeResult r = import_home(ctx.db(), ho);
  bar.finish();
  update_text_packs(ctx.db());  // grep scans the packed text, not the nodes' JSON
  Json counts = Json::object();
  for (const char* k : {"new", "appended", "rewritten", "touched", "unchanged", "ignored", "failed"}) counts[k] = 0;
  Json files = Json::array();
  std::int64_t added = 0, bytes = 0;
  for (const auto& f : r.files) {
    counts[f.outcome] = counts[f.outcome].get<std::int64_t>() + 1;
    bytes += f.bytes_read;
    if (f.outcome == "unchanged") continue;
    Json j = {{"path", f.path}, {"agent", f.agent}, {"outcome", f.outcome}, {"bytes_read", f.bytes_read}};
    if (!f.reason.empty()) j["reason"] = f.reason;
    if (f.resumed_at >= 0) j["resumed_at"] = f.resumed_at;
    if (!f.resume_refused.empty()) j["read_whole_because"] = f.resume_refused;
    if (!f.error.empty()) j["error"] = f.error;
    files.push_back(std::move(j));
  }
  for (const auto& s : r.import.sessions) added += s.nodes_added;
  Json out = {{"schema", "ctxfold.import/1"},
              {"from", o.from},
              {"roots", r.roots},
              {"files_seen", r.files.size()},
              {"outcomes", counts},
              {"bytes_read", bytes},
              {"nodes_added", added},
              {"files", files},
              {"sessions", sessions_json(r.import)},
              {"warnings", warnings_json(r.import)}};
  emit(out);
  return 0;
}

int run_import(Context& ctx, const ImportOptionsCli& o) {
  if (!o.from.empty()) return run_home(ctx, o);
  if (o.paths.empty())
    throw Error(Exit::usage, "import.paths", "nothing to import",
                "name transcript files, - for stdin, or --from AGENT for an agent's home");
  ImportResult r = import_paths(ctx.db(), o.paths, o.opts);
  update_text_packs(ctx.db());  // grep scans the packed text, not the nodes' JSON
  Json out = {{"schema", "ctxfold.import/1"}, {"sessions", sessions_json(r)}, {"warnings", warnings_json(r)}};
  emit(out);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_import(CLI::App& sub) {
  auto o = std::make_shared<ImportOptionsCli>();
  sub.add_option("paths", o->paths, "transcript files, or - for stdin");
  sub.add_option("--format", o->opts.format, "auto, claude-code, codex, gemini, qwen, pi, copilot, cline, opencode, kilo, openai, anthropic, openhands, ctxfold")
      ->default_val("auto");
  sub.add_flag("--strict", o->opts.strict, "any warning fails the import (exit 3) and nothing is written");
  sub.add_option("--max-record-bytes", o->opts.max_record_bytes,
                 "the record limit: a JSONL line or a whole JSON document longer than this is skipped with a "
                 "warning naming its file and line (line.too_long, document.too_large), read past in bounded memory; "
                 "a number of bytes, or with a unit (KiB, MiB, GiB, also K, M, G in powers of 1024)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("64MiB");
  sub.add_option("--from", o->from,
                 "import an agent home incrementally: claude-code, codex, gemini, qwen, pi, copilot, cline, opencode, kilo or all (default roots: "
                 "$CLAUDE_CONFIG_DIR/projects or ~/.claude/projects, $CODEX_HOME/sessions and archived_sessions "
                 "or ~/.codex/..., $GEMINI_CLI_HOME/.gemini/tmp/*/chats or ~/.gemini/tmp/*/chats, $QWEN_RUNTIME_DIR/projects or "
                 "$QWEN_HOME/projects or ~/.qwen/projects (*/chats/*.jsonl), $PI_CODING_AGENT_SESSION_DIR or "
                 "$PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions, $COPILOT_HOME/session-state or "
                 "~/.copilot/session-state (*/events.jsonl), $CLINE_SESSION_DATA_DIR or $CLINE_DATA_DIR/sessions or "
                 "$CLINE_DIR/data/sessions or ~/.cline/data/sessions (*/*.messages.json), $OPENCODE_DB or "
                 "$XDG_DATA_HOME/opencode or ~/.local/share/opencode (opencode*.db), the same for kilo ($KILO_DB, "
                 "kilo*.db)); a folder given as the "
                 "path is walked instead, each file's format detected (all: every importable format; a file not "
                 "imported is named with the reason)")
      ->check(CLI::IsMember({"claude-code", "codex", "gemini", "qwen", "pi", "copilot", "cline", "opencode", "kilo", "all"}));
  sub.add_flag("--follow-symlinks", o->follow_symlinks,
               "with --from: also import symbolic links to files outside the folders walked (without it they are "
               "listed as ignored); a link into the tree is read once as its target, links to folders never");
  sub.add_flag("--no-progress", o->no_progress, "no progress line on stderr even when it is a terminal");
  return [o](Context& ctx) { return run_import(ctx, *o); };
}

}  // namespace ctxfold::cli
