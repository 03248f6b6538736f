#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "store/store.hpp"
#include "util/environment.hpp"
#include "util/json.hpp"

namespace ctxfold::cli {

/// What a command needs before it runs (ninja's tool table): nothing, a read-only database
/// (SQLITE_OPEN_READONLY; the file's bytes never change) or a writable one (created and migrated).
enum class Needs { nothing, read_only, read_write };

/// Global state shared by every command: the global options and the opened store.
struct Context {
  std::string db_path;
  std::optional<std::string> session;  ///< --session / CTXFOLD_SESSION
  bool text = false;                   ///< --text: a human view where one helps
  std::optional<Store> store;
  /// What lib/ reads of the process (util/environment.hpp); tests of cmd/ may point it elsewhere.
  Environment* env = &system_environment();

  Store& db() { return *store; }
  /// Resolves --session against the open store (docs/commands.md "Choosing the session").
  std::string resolve_session() { return store->resolve_session(session); }
};

/// Writes one JSON document (or JSON Lines record) and a newline to stdout.
void emit(const Json& j);
/// Writes raw text to stdout.
void emit_text(const std::string& s);
/// A warning on stderr ("ctxfold: warning: ..."), never on stdout.
void warn(const std::string& message);

/// Reads the ids a command was given: the positional value, or with "-" one id per stdin line,
/// where a line may also be a JSON record printed by another ctxfold command (its "id",
/// "node", "summary_id" or "head" field, looked up in "data" too for the nested records of
/// ctxfold.grep/1, {"type":"match","data":{"id":...}}; a listing with an "items" array, like
/// list's document, gives each item's id). A stream's closing {"type":"summary",...} record and
/// records without an id are skipped.
std::vector<std::string> ids_from_arg(const std::string& arg);
/// Runs fn for each id of arg (an id, or "-": ids_from_arg's stdin records). An Error thrown for
/// a record read from stdin is reported on stderr as "ctxfold: error: stdin:LINE: message" and the
/// remaining records still run (ripgrep's rule: the exit code is decided at the end); returns the
/// exit code of the first failure, 0 when none. With a plain id the Error propagates.
int for_each_id(const std::string& arg, const std::function<void(const std::string&)>& fn);

/// What a subcommand's setup hands back: the function that runs it once parsed (the exit code it
/// returns is the process's) and, for a command whose flags decide whether it writes, what this
/// very invocation needs (`compact --dry-run` writes nothing, so it opens the database read-only
/// and works on a file it cannot write). An empty `needs` means the command table's.
struct Runner {
  std::function<int(Context&)> run;
  std::function<Needs()> needs;

  Runner() = default;
  /// A command that always needs what its table entry says.
  template <class F>
    requires std::is_invocable_r_v<int, F&, Context&>
  Runner(F f) : run(std::move(f)) {}
  /// A command whose parsed flags decide its needs (called after parsing, before the store opens;
  /// it may throw an Error for a bad flag or config).
  Runner(std::function<int(Context&)> r, std::function<Needs()> n) : run(std::move(r)), needs(std::move(n)) {}
};

/// One entry of the command table: the single source of names, summaries and needs (the most a
/// command ever needs; its Runner may ask for less for the flags it was given).
struct Command {
  const char* name;
  const char* summary;
  Needs needs;
  /// Declares the subcommand's flags on `sub` and returns what runs it once parsed.
  std::function<Runner(CLI::App& sub)> setup;
};

const std::vector<Command>& command_table();

// One registration function per file in cmd/.
std::function<int(Context&)> setup_import(CLI::App& sub);
std::function<int(Context&)> setup_append(CLI::App& sub);
std::function<int(Context&)> setup_sessions(CLI::App& sub);
std::function<int(Context&)> setup_log(CLI::App& sub);
std::function<int(Context&)> setup_export(CLI::App& sub);
std::function<int(Context&)> setup_context(CLI::App& sub);
std::function<int(Context&)> setup_config(CLI::App& sub);
std::function<int(Context&)> setup_show(CLI::App& sub);
std::function<int(Context&)> setup_checkout(CLI::App& sub);
std::function<int(Context&)> setup_render(CLI::App& sub);
std::function<int(Context&)> setup_verify(CLI::App& sub);
Runner setup_compact(CLI::App& sub);
Runner setup_sync(CLI::App& sub);
std::function<int(Context&)> setup_snapshot(CLI::App& sub);
std::function<int(Context&)> setup_fork(CLI::App& sub);
std::function<int(Context&)> setup_rewind(CLI::App& sub);
std::function<int(Context&)> setup_grep(CLI::App& sub);
std::function<int(Context&)> setup_expand(CLI::App& sub);
std::function<int(Context&)> setup_describe(CLI::App& sub);
std::function<int(Context&)> setup_list(CLI::App& sub);
std::function<int(Context&)> setup_tokens(CLI::App& sub);
std::function<int(Context&)> setup_index(CLI::App& sub);
std::function<int(Context&)> setup_compactions(CLI::App& sub);
std::function<int(Context&)> setup_hook(CLI::App& sub);
std::function<int(Context&)> setup_usage(CLI::App& sub);
std::function<int(Context&)> setup_files(CLI::App& sub);
std::function<int(Context&)> setup_commands(CLI::App& sub);
Runner setup_prepare(CLI::App& sub);
std::function<int(Context&)> setup_replay(CLI::App& sub);
std::function<int(Context&)> setup_eval(CLI::App& sub);
std::function<int(Context&)> setup_mcp(CLI::App& sub);
std::function<int(Context&)> setup_report(CLI::App& sub);

}  // namespace ctxfold::cli
