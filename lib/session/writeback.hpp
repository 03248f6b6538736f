#pragma once
// Write-back: HEAD's context as ctxfold renders it, written as a NEW session in an agent client's
// own transcript format, so the client resumes it (`claude --resume ID`, `codex exec resume ID`)
// and its next request holds the render. docs/formats/writeback.md describes the records written.
#include <cstdint>
#include <string>
#include <vector>

#include "render/render.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// The clients a session can be written back for.
enum class WritebackClient { claude_code, codex };

/// Parses "claude-code" | "codex"; nullopt for anything else.
std::optional<WritebackClient> parse_writeback_client(const std::string& s);

struct WritebackOptions {
  WritebackClient client = WritebackClient::claude_code;
  /// What is rendered (strategy, head, model for snapcompact's frames: empty means the model the
  /// transcript names last, as `render` does); the row cap is not applied
  /// (max_row_bytes 0): the client receives each row whole.
  RenderOptions render;
  /// The project folder the client is to resume in; empty: the session's recorded one
  /// (writeback_cwd), else `fallback_cwd`.
  std::string cwd;
  std::string fallback_cwd;
  /// The new session's id; empty: a fresh one (a random UUID version 4 for Claude Code, a UUID
  /// version 7 from `now` for Codex). Claude Code and Codex both name files by it: it must be a
  /// UUID (8-4-4-4-12 hex), else Error(usage,"export.id").
  std::string id;
  /// Seconds since the epoch (UTC): the records' timestamps and the Codex file's date.
  std::int64_t now = 0;
};

/// A written-back session: its lines and where the client looks for it.
struct Writeback {
  std::string client;         ///< "claude-code" | "codex"
  std::string id;             ///< the new session's id
  std::string cwd;            ///< the project folder it belongs to
  /// The file's path under the client's root (CLAUDE_CONFIG_DIR, CODEX_HOME):
  /// "projects/<cwd slug>/<id>.jsonl" or "sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl".
  std::string relative_path;
  std::vector<std::string> lines;  ///< the file's JSON Lines, without newlines
  /// {"source_session","source_head","strategy","summary","folds","archive","exported_at"}: where
  /// the session came from; written into the file too (docs/formats/writeback.md).
  Json provenance;
  std::int64_t messages = 0;       ///< conversation records written (Claude Code messages, Codex items)
  /// The render substitutes ctxfold's summaries (a rolling summary, lcm folds or a snapcompact
  /// archive) for history; a Claude Code file then starts with a compact boundary when the
  /// render's first message is that summary.
  bool compacted = false;
  std::int64_t estimated_tokens = 0;  ///< the render's estimate (tokens/estimate.hpp)
};

/// Renders `session` (opts.render) and writes the render's messages, less the leading system run
/// (the client sends its own system prompt), as the client's records:
/// - claude-code: a `system` compact_boundary record and the first message as the
///   `isCompactSummary` user record when the render starts with a summary, lcm folds or a
///   snapcompact archive (its frames as image blocks); then one `user` / `assistant` record per
///   Anthropic message (render --format anthropic), chained by parentUuid, tool results beside
///   their calls' records (sourceToolAssistantUUID); provenance in the first record's "ctxfold".
/// - codex: a `session_meta` record (id, cwd, originator "ctxfold", provenance in "ctxfold"),
///   then one `response_item` per Responses input item (render --format responses).
/// Throws Error(bad_input,"session.unknown") for an unknown session, render's errors, and
/// Error(bad_input,"export.empty") when the render holds no message to write.
Writeback build_writeback(Store& st, const std::string& session, const WritebackOptions& opts);

/// The project folder recorded for `session`: its metadata "cwd", else the first Claude Code
/// record's cwd among its nodes, else a Codex session_meta's cwd; empty when none is recorded.
std::string writeback_cwd(Store& st, const std::string& session);

/// Claude Code's project folder name for cwd: every character other than an ASCII letter or
/// digit becomes "-" ("/home/a/my.app" -> "-home-a-my-app"), as the client names
/// ~/.claude/projects/* (docs/formats/writeback.md).
std::string claude_project_slug(const std::string& cwd);

/// Writes `lines` (each followed by "\n") to a file that must not exist yet: parent folders are
/// created, the file is opened with O_CREAT|O_EXCL, so an existing file is never touched.
/// Throws Error(environment,"export.exists") when the path exists (nothing written) and
/// Error(environment,"io.write") on any other failure (a partial file is removed).
void write_new_file(const std::string& path, const std::vector<std::string>& lines);

}  // namespace ctxfold
