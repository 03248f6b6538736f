#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "import/import.hpp"
#include "util/environment.hpp"

namespace ctxfold {

/// What `ctxfold import --from AGENT [DIR]` reads: the agent ("claude-code", "codex", "gemini",
/// "qwen", "pi", "copilot", "cline", "opencode", "kilo" or "all"), an explicit folder replacing the agents' default roots, the environment those roots
/// come from, and who hears of the progress.
struct HomeOptions {
  std::string from = "all";
  std::optional<std::string> dir;
  /// Files to import instead of a folder walk (the hook path: one agent's transcript), each read
  /// as `from`'s format (an agent, not "all"), with the same incremental bookkeeping; a Claude
  /// Code main file brings its `<stem>/subagents/` files. A file that does not exist is
  /// Error(bad_input, "import.no_file") before anything is written.
  std::vector<std::string> files;
  /// Where the agents' default roots are read (agent_home_roots); needed when `dir` is not given
  /// (without it import_home throws Error(internal,"import.env")).
  const Environment* env = nullptr;
  /// Called before each file is read with (files done, files in all, the file's name); for a
  /// progress line (the CLI draws one only on a terminal). May be empty.
  std::function<void(std::int64_t done, std::int64_t total, const std::string& file)> progress;
  /// Follow symbolic links to files outside the folder walked (`--follow-symlinks`); without it
  /// such a link is reported as ignored. A link whose target lies inside the tree is read as
  /// its target, once, either way; links to folders are never followed (docs/import.md).
  bool follow_symlinks = false;
  /// The record limit in bytes (ImportOptions::max_record_bytes).
  std::uint64_t max_record_bytes = JsonlReader::kDefaultMaxRecord;
  /// Hold a Claude Code file's open turn back for the next run (docs/formats/claude-code.md
  /// "Read while it is written"): for a transcript its agent is still writing (the hook path).
  /// Off (the default, `import --from`): every file is read as it
  /// is, and one whose last run held an open turn back is read again from there even when it did
  /// not change since.
  bool hold_open_turn = false;
  /// With hold_open_turn: the agent's last reply is complete (Stop, SessionEnd), so only what
  /// follows the last assistant message is held back.
  bool reply_done = false;
  /// Fault injection for tests: called with a file's path after it was listed and stat'ed,
  /// before it is opened (to make it vanish or grow while it is being read).
  std::function<void(const std::string& path)> after_stat;
};

/// One source file's outcome: new | appended | rewritten (imported, the whole file read and
/// deduplicated by node id and digest) | touched (same bytes as before, new modification time) |
/// unchanged (size and modification time as recorded: not opened) | ignored (another agent's
/// format under --from AGENT, or no format detected: HomeFile::reason, and a "source.ignored"
/// warning naming the file) |
/// failed (unreadable or vanished: reported, the rest imported).
struct HomeFile {
  std::string path;
  std::string agent;
  std::string outcome;
  std::int64_t bytes_read = 0;     ///< bytes of the file read as transcript (the appended bytes when resumed)
  std::int64_t resumed_at = -1;    ///< the byte offset a resumed read started at, -1 for a whole read
  std::string resume_refused;      ///< why a file that only grew was read whole (kResumeUnsafe message)
  std::string reason;              ///< ignored: why (the format detected under another --from, or why none was)
  std::string error;
};

struct HomeResult {
  ImportResult import;
  std::vector<std::string> roots;  ///< the folders walked (those that exist)
  std::vector<HomeFile> files;     ///< every file looked at, in import order
};

/// The folders an agent keeps its transcripts in, from the agent's own defaults and environment
/// overrides: claude-code `$CLAUDE_CONFIG_DIR/projects` (default
/// `~/.claude/projects`); codex `$CODEX_HOME/sessions` and `$CODEX_HOME/archived_sessions`
/// (default `~/.codex`); gemini `$GEMINI_CLI_HOME/.gemini/tmp` (default `~/.gemini/tmp`; only
/// `<hash>/chats/` files and their `chats/<sessionId>/*.jsonl` sub-agent files are taken); qwen
/// `$QWEN_RUNTIME_DIR/projects`, else `$QWEN_HOME/projects` (default `~/.qwen/projects`; only
/// `<project>/chats/*.jsonl`); pi `$PI_CODING_AGENT_SESSION_DIR`, else `$PI_CODING_AGENT_DIR/sessions`
/// (default `~/.pi/agent/sessions`; `*.jsonl`); copilot `$COPILOT_HOME/session-state` (default
/// `~/.copilot/session-state`; only `<sessionId>/events.jsonl`); cline `$CLINE_SESSION_DATA_DIR`,
/// else `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR/data/sessions` (default
/// `~/.cline/data/sessions`; only `*.messages.json`); opencode and kilo their SQLite store in
/// `$XDG_DATA_HOME/<agent>` (default `~/.local/share/<agent>`; only `<agent>*.db` at its top), or
/// the store file `$OPENCODE_DB` / `$KILO_DB` names (relative: to that folder). "all" gives them
/// all. Throws Error(usage, "import.from") for another agent name.
std::vector<std::string> agent_home_roots(const std::string& agent, const Environment& env);

/// Imports every transcript file under the roots (or opts.dir: each file's format detected;
/// with from "all" every format importer_for reads, else only that agent's) incrementally, one write
/// transaction per file: a file whose size and modification time equal its newest
/// source_files row is skipped without being opened. A changed one is checked cheaply: the
/// sha256 of the 64 KiB before the recorded resume point (just after the last newline read,
/// schema 007) must be unchanged, else it is "rewritten" and imported again whole, the sink
/// skipping nodes already stored. One that only grew is "appended": a Claude Code file is read
/// from the resume point on (HomeFile::bytes_read = the appended bytes; the importer refuses,
/// and the whole file is read, when a record there needs what came before: a compaction, an
/// inline sidechain, a streamed message split at the resume point, an unknown parent); the
/// other formats are read whole and deduplicated. The resume point is taken within the size
/// stat gave before reading: lines written while the file is read are read again by the next
/// run and deduplicated. A file that cannot be read or vanishes is
/// reported in HomeFile::error and the rest imported. Claude Code main files are imported before
/// their sub-agent files. Files are keyed by absolute path, so two files with the same session id
/// in different places are two sources (sessions are keyed by file name, see the importers).
HomeResult import_home(Store& store, const HomeOptions& opts);

}  // namespace ctxfold
