// ctxfold: one binary, subcommands over SQLite session databases. The only place an exit code
// is made.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "context.hpp"
#include "doc.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

namespace ctxfold::cli {

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      {"import", "import transcripts (Claude Code, Codex, Gemini, OpenAI, Anthropic, OpenHands, ctxfold JSONL)",
       Needs::read_write, setup_import},
      {"append", "append nodes given as JSON on stdin (the harness write path)", Needs::read_write, setup_append},
      {"sessions", "the sessions index: agent, project, title, models, time span, counts, sub-agents and lineage "
                   "(JSON Lines)",
       Needs::read_only, setup_sessions},
      {"compactions", "every compaction of a session and what its summary dropped (JSON Lines)", Needs::read_only,
       setup_compactions},
      {"usage", "tokens and cost per session, day, model or project from the usage providers recorded (JSON Lines)",
       Needs::read_only, setup_usage},
      {"files", "every file the agent read, created, edited or deleted, with the edit and its result; --path P is "
                "one file's history (JSON Lines)",
       Needs::read_only, setup_files},
      {"commands", "every shell command the agent ran, with exit status, duration and output size where recorded "
                   "(JSON Lines)",
       Needs::read_only, setup_commands},
      {"log", "walk HEAD's spine, newest first (JSON Lines)", Needs::read_only, setup_log},
      {"show", "print one node", Needs::read_only, setup_show},
      {"checkout", "move HEAD to a node (an explicit, recorded HEAD move)", Needs::read_write, setup_checkout},
      {"render", "the context a model reads from HEAD", Needs::read_only, setup_render},
      {"context", "inspect the prepared request: sections, sources, tokens against the window, compaction status",
       Needs::read_only, setup_context},
      {"tokens", "provider-measured input tokens against ctxfold's estimates, per request", Needs::read_only,
       setup_tokens},
      {"prepare", "the request to send next: project, compact when due (once), project again", Needs::read_write,
       setup_prepare},
      {"replay", "re-derive a summary offline from its recorded summarizer calls (exit 1 if it differs)",
       Needs::read_only, setup_replay},
      {"compact", "compact the session now (rolling, lcm or snapcompact; HEAD never moves)", Needs::read_write, setup_compact},
      {"snapshot", "the session's append boundary and state (read it back with --as-of)", Needs::read_only,
       setup_snapshot},
      {"fork", "a new session holding the path from the root to a node (no model call)", Needs::read_write,
       setup_fork},
      {"rewind", "move HEAD back along its own spine (an explicit, recorded HEAD move)", Needs::read_write,
       setup_rewind},
      {"grep", "search raw history and summaries (JSON Lines; exit 1 when nothing matches)", Needs::read_only,
       setup_grep},
      {"expand", "the original rows a summary covers, paged by graphemes", Needs::read_only, setup_expand},
      {"describe", "a node's place in the summary tree: coverage, children, parents, producer", Needs::read_only,
       setup_describe},
      {"list", "every stored summary of a session, active or not, paged", Needs::read_only, setup_list},
      {"sync", "copy the sessions another database lacks, SQLite or PostgreSQL: --to DB pushes --db there, --from DB "
               "pulls into --db; incremental, resumable, digests checked",
       Needs::read_write, setup_sync},
      {"index", "bring the derived text index (grep trigram index, text lengths for expand) up to date",
       Needs::read_write, setup_index},
      {"export", "a session back out as ctxfold JSONL, OpenAI or Anthropic messages (import reads it back)",
       Needs::read_only, setup_export},
      {"report", "one self-contained HTML page (or a Markdown digest) of a session: the render with compactions as "
                 "capsules, dropped reports, tools paired, usage, search",
       Needs::read_only, setup_report},
      {"eval", "probe-based evaluation: a model answers questions from the full history and each strategy's render",
       Needs::read_only, setup_eval},
      {"mcp", "a Model Context Protocol server on stdio: grep, expand, describe, list, sessions, dropped as tools",
       Needs::nothing, setup_mcp},
      {"hook", "an agent's hook: archive the session it names; after a compaction, print the context to re-inject "
               "(install|uninstall AGENT: the settings that run it)",
       Needs::nothing, setup_hook},
      {"config", "the effective settings per strategy and where each came from", Needs::nothing, setup_config},
      {"verify-invariants", "check the session database invariants (exit 1 on any violation)", Needs::nothing,
       setup_verify},
  };
  return table;
}

namespace {

/// Writes n bytes to stdout; a reader that went away (EPIPE) ends the command quietly.
void write_out(const char* p, std::size_t n) {
  if (n > 0 && std::fwrite(p, 1, n, stdout) != n && errno == EPIPE) std::exit(0);
}

/// dump_json_to's pieces to stdout through a 64 KiB buffer: a document is printed without being
/// held as one string (a large render would hold its text twice: the string and the document).
class StdoutSink final : public JsonSink {
 public:
  StdoutSink() { buf_.reserve(kSize); }
  ~StdoutSink() override { flush(); }
  StdoutSink(const StdoutSink&) = delete;
  StdoutSink& operator=(const StdoutSink&) = delete;
  void append(const char* p, std::size_t n) override {
    if (buf_.size() + n > kSize) flush();
    if (n >= kSize) write_out(p, n);
    else buf_.append(p, n);
  }
  void flush() {
    write_out(buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  static constexpr std::size_t kSize = 64 * 1024;
  std::string buf_;
};

}  // namespace

void emit(const Json& j) {
  StdoutSink out;
  dump_json_to(j, out);
  out.append("\n", 1);
}

void emit_text(const std::string& s) { write_out(s.data(), s.size()); }

void warn(const std::string& message) { fmt::print(stderr, "ctxfold: warning: {}\n", message); }

}  // namespace ctxfold::cli

namespace {

// Removes the database file (and its WAL, shared-memory and journal files) when it holds no
// session and no node. Only called for a file this very call created, after the command failed.
void remove_if_empty(ctxfold::cli::Context& ctx) {
  using namespace ctxfold;
  try {
    Stmt q = ctx.store->db().prepare("SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM sessions)");
    if (!q.step() || q.int64(0) != 0) return;
  } catch (const Error&) {
    return;  // cannot tell: keep the file
  }
  ctx.store.reset();
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(ctx.db_path + suffix, ec);
}

// The command name closest to s by edit distance, when it is close enough to be a typo.
const char* nearest_command(const std::string& s) {
  const char* best = nullptr;
  std::size_t best_d = 3;  // at most two edits
  for (const auto& c : ctxfold::cli::command_table()) {
    std::string t = c.name;
    std::vector<std::size_t> prev(t.size() + 1), cur(t.size() + 1);
    for (std::size_t j = 0; j <= t.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= s.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= t.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (s[i - 1] == t[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    if (prev[t.size()] < best_d) {
      best_d = prev[t.size()];
      best = c.name;
    }
  }
  return best;
}

int report(const ctxfold::Error& e) {
  fmt::print(stderr, "ctxfold: error: {}\n", e.what());
  if (!e.hint().empty()) fmt::print(stderr, "hint: {}\n", e.hint());
  return static_cast<int>(e.exit());
}

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The subcommand named on the command line, found before CLI11 parses: only its options are
// built (building all of them was a quarter of the start-up of a short command). Without one
// (--help, --version, a typo, the hidden generators) every subcommand is built.
const ctxfold::cli::Command* named_command(int argc, char** argv) {
  using ctxfold::cli::Command;
  const Command* named = nullptr;
  for (int i = 1; i < argc && !named; ++i) {
    std::string_view a = argv[i];
    if (a == "--db" || a == "--session") {
      ++i;
      continue;
    }
    if (a == "-h" || a == "--help") break;  // the top-level help lists every subcommand
    if (a.empty() || a[0] == '-') continue;
    for (const Command& c : ctxfold::cli::command_table())
      if (a == c.name) named = &c;
    break;
  }
  return named;
}

// Adds the subcommands (only `named` when one is); the one parsed sets `run` and `chosen`.
void add_subcommands(CLI::App& app, const ctxfold::cli::Command* named, ctxfold::cli::Runner& run,
                     const ctxfold::cli::Command*& chosen) {
  for (const ctxfold::cli::Command& c : ctxfold::cli::command_table()) {
    if (named && &c != named) continue;
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    // Global options may also follow the subcommand name.
    sub->fallthrough();
    auto fn = c.setup(*sub);
    sub->callback([&run, &chosen, fn, &c] {
      run = fn;
      chosen = &c;
    });
  }
}

// An unknown subcommand gets a plain answer and, like ninja and git, a "did you mean": the usage
// exit code then, nothing for a known one.
std::optional<int> refuse_unknown_command(int argc, char** argv) {
  using namespace ctxfold;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--db" || a == "--session") {
      ++i;
      continue;
    }
    if (a.empty() || a[0] == '-') continue;
    const cli::Command* known = nullptr;
    for (const cli::Command& c : cli::command_table())
      if (a == c.name) known = &c;
    if (known) break;
    fmt::print(stderr, "ctxfold: error: unknown command '{}'\n", a);
    if (const char* near = nearest_command(a)) fmt::print(stderr, "hint: did you mean '{}'?\n", near);
    return static_cast<int>(Exit::usage);
  }
  return std::nullopt;
}

// A positional argument that starts with '-' (`grep "->"`) is read as an option: name the fix.
void hint_dash_argument(CLI::App& app, const ctxfold::cli::Command& named, int argc, char** argv) {
  CLI::App* sub = nullptr;
  try {
    sub = app.get_subcommand(named.name);
  } catch (const CLI::Error&) {
  }
  bool after_name = false;
  for (int i = 1; i < argc && sub; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a == named.name) after_name = true;
    if (!after_name || a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1]))) continue;
    const std::string opt = a.substr(0, a.find('='));
    if (sub->get_option_no_throw(opt) || app.get_option_no_throw(opt) || opt == "-h" || opt == "--help") continue;
    fmt::print(stderr, "hint: '{}' was read as an option; to pass an argument that starts with '-', put it after "
                       "`--`: ctxfold {} [options] -- '{}'\n", a, named.name, a);
    break;
  }
}

// A hook call (`hook AGENT`, which the agent runs; not install/uninstall) never exits 2, which
// Claude Code reads as "block the compaction" or "do not stop" (cmd/hook.cpp): its usage errors
// exit 3 (bad input). Every other command's exit 2.
int usage_exit(const ctxfold::cli::Command* named, int argc, char** argv) {
  if (!named || std::string_view(named->name) != "hook") return static_cast<int>(ctxfold::Exit::usage);
  for (int i = 1; i < argc; ++i)
    if (std::string_view a = argv[i]; a == "install" || a == "uninstall") return static_cast<int>(ctxfold::Exit::usage);
  return static_cast<int>(ctxfold::Exit::bad_input);
}

// The bulk write commands check the whole file before writing (docs/commands.md "Damaged
// databases": PRAGMA quick_check, O(file size); append, the per-turn path, does not).
bool checks_whole_file(const ctxfold::cli::Command& c) {
  const std::string_view name = c.name;
  return name == "import" || name == "index" || name == "sync";
}

// Opens the store the command needs and runs it: the exit code, errors reported; stdout is
// flushed after.
int run_command(ctxfold::cli::Context& ctx, const ctxfold::cli::Runner& run, const ctxfold::cli::Command* chosen) {
  using namespace ctxfold;
  using namespace ctxfold::cli;
  int rc = 0;
  // A database this call creates and then fails to fill is removed again: a failed first import
  // must not leave an empty ctxfold.db behind that later commands would mistake for a real one.
  std::error_code exists_ec;
  bool creates_db = false;
  bool failed = false;
  try {
    const Needs needs = run.needs ? run.needs() : chosen->needs;
    creates_db = needs == Needs::read_write && !std::filesystem::exists(ctx.db_path, exists_ec);
    if (needs != Needs::nothing)
      ctx.store.emplace(open_store(ctx.db_path,
                                   needs == Needs::read_only ? Store::Mode::read_only : Store::Mode::read_write));
    if (needs == Needs::read_write && !creates_db && checks_whole_file(*chosen)) check_integrity(*ctx.store);
    rc = run.run(ctx);
  } catch (const Error& e) {
    rc = report(e);
    failed = true;
  } catch (const nlohmann::json::exception& e) {
    fmt::print(stderr, "ctxfold: error: invalid JSON: {}\n", e.what());
    rc = static_cast<int>(Exit::bad_input);
    failed = true;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "ctxfold: error: out of memory\n");
    rc = static_cast<int>(Exit::environment);
    failed = true;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ctxfold: internal error: {}\n", e.what());
    rc = static_cast<int>(Exit::internal);
    failed = true;
  }
  if (failed && creates_db && ctx.store) remove_if_empty(ctx);
  ctx.store.reset();
  if (std::fflush(stdout) != 0 && errno != EPIPE) {
    fmt::print(stderr, "ctxfold: error: cannot write to stdout\n");
    if (rc == 0) rc = static_cast<int>(Exit::environment);
  }
  return rc;
}

/// Keeps freed memory in the process. By default glibc maps each allocation over a threshold
/// that adapts from 128 KiB with mmap and unmaps it when freed, and gives a freed heap top above
/// twice that back to the kernel: an import, which holds one record's text, its parse and its
/// serialized columns at a time, then faults every page of those buffers in again for each
/// record. With the threshold fixed at its largest value (32 MiB on 64-bit glibc) and the trim
/// threshold above it, a 10^5-line import takes 21,000 minor faults instead of 66,000 and ~10 %
/// less CPU, at the same peak RSS (bench/README.md, "Import CPU: freed memory kept, pass 2 read ahead").
/// Only the commands that write (import, append, compact, index, sync, ...): a read command that
/// frees a render before the next (verify-invariants) would keep both, 52 -> 68 MB peak at 10^6
/// nodes (bench/README.md "verify-invariants vs PRAGMA integrity_check").
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ctxfold;
  using namespace ctxfold::cli;
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe is seen as EPIPE on write: quiet exit 0

  Context ctx;
  CLI::App app{"ctxfold: session databases for LLM agents: import, render, compact, verify", "ctxfold"};
  app.set_version_flag("--version", "ctxfold 0.1.0");
  app.require_subcommand(1);
  ctx.db_path = env_or("CTXFOLD_DB", "./ctxfold.db");
  if (const char* s = std::getenv("CTXFOLD_SESSION"); s && *s) ctx.session = s;
  app.add_option("--db", ctx.db_path, "session database: a SQLite file, or a postgresql:// URL (docs/backends.md) (env CTXFOLD_DB, default ./ctxfold.db)");
  app.add_option("--session", ctx.session, "session id (env CTXFOLD_SESSION; default: the only or newest session)");
  app.add_flag("--text", ctx.text, "a human view instead of JSON where one helps");

  const Command* named = named_command(argc, argv);
  if (named && named->needs == Needs::read_write) keep_freed_memory();
  Runner run;
  const Command* chosen = nullptr;
  add_subcommands(app, named, run, chosen);

  // The hidden generators of the man pages and completions read this very app (cmd/doc.cpp).
  if (argc >= 2 && (std::string(argv[1]) == "__man" || std::string(argv[1]) == "__complete")) {
    std::vector<std::string> rest(argv + 2, argv + argc);
    try {
      int rc = std::string(argv[1]) == "__man" ? run_man(app, rest) : run_complete(app, rest, ctx.db_path, ctx.session);
      std::fflush(stdout);
      return rc;
    } catch (const Error& e) {
      return report(e);
    }
  }

  if (auto rc = refuse_unknown_command(argc, argv)) return *rc;

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc != 0 && named) hint_dash_argument(app, *named, argc, argv);
    return rc == 0 ? 0 : usage_exit(named, argc, argv);
  }
  return run_command(ctx, run, chosen);
}
