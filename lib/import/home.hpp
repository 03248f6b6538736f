#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "import/import.hpp"

namespace ctxfold {

/// What `ctxfold import --from AGENT [DIR]` reads: the agent ("claude-code", "codex", "gemini"
/// or "all"), an explicit folder replacing the agents' default roots, and whether to draw a
/// progress line on stderr (the caller decides; the CLI does it only when stderr is a terminal).
struct HomeOptions {
  std::string from = "all";
  std::optional<std::string> dir;
  bool progress = false;
};

/// One source file's outcome: new | appended | rewritten (imported, the whole file read and
/// deduplicated by node id and digest) | touched (same bytes as before, new modification time) |
/// unchanged (size and modification time as recorded: not opened) | ignored (another format) |
/// failed (unreadable or vanished: reported, the rest imported).
struct HomeFile {
  std::string path;
  std::string agent;
  std::string outcome;
  std::int64_t bytes_read = 0;
  std::string error;
};

struct HomeResult {
  ImportResult import;
  std::vector<std::string> roots;  ///< the folders walked (those that exist)
  std::vector<HomeFile> files;     ///< every file looked at, in import order
};

/// The folders an agent keeps its transcripts in, from the agent's own defaults and environment
/// overrides (FORMATS.md §1.1, §2.1, §3): claude-code `$CLAUDE_CONFIG_DIR/projects` (default
/// `~/.claude/projects`); codex `$CODEX_HOME/sessions` and `$CODEX_HOME/archived_sessions`
/// (default `~/.codex`); gemini `~/.gemini/tmp` (only `<hash>/chats/` files are taken). "all"
/// gives the three. Throws Error(usage, "import.from") for another agent name.
std::vector<std::string> agent_home_roots(const std::string& agent);

/// Imports every transcript file under the roots (or opts.dir) incrementally, one write
/// transaction per file: a file whose size and modification time equal its newest
/// source_files row is skipped without being opened; a changed one is compared with the digest
/// of the bytes read before (a prefix match is "appended", else "rewritten") and imported again
/// whole, the sink skipping nodes already stored. A file that cannot be read or vanishes is
/// reported in HomeFile::error and the rest imported. Claude Code main files are imported before
/// their sub-agent files. Files are keyed by absolute path, so two files with the same session id
/// in different places are two sources (sessions are keyed by file name, see the importers).
HomeResult import_home(Store& store, const HomeOptions& opts);

}  // namespace ctxfold
