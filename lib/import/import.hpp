#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "import/jsonl_reader.hpp"
#include "model/node.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// A recorded fact about a bad or surprising source line: file, 1-based line, a stable code
/// (e.g. "line.nul", "line.glued", "line.truncated", "line.malformed", "utf8.invalid", "json.lone_surrogate",
/// "parent.missing", "id.duplicate_conflict", "id.duplicate", "cycle", "image.undecodable",
/// "record.unknown_type", "node.empty") and a message.
struct ImportWarning {
  std::string file;
  std::int64_t line = 0;
  std::string code;
  std::string message;
};

/// Per-session outcome of an import.
struct SessionImport {
  std::string session;
  std::string source;
  std::string format;
  std::int64_t nodes_added = 0;
  std::int64_t nodes_skipped = 0;
  std::optional<std::string> head;
};

struct ImportResult {
  std::vector<SessionImport> sessions;
  std::vector<ImportWarning> warnings;
};

/// Where an incremental import (import_home) resumes reading a file that only grew: the byte
/// offset of a line start and the number of physical lines before it. An importer that cannot
/// continue from there throws Error(bad_input, kResumeUnsafe) before writing anything; the caller
/// then reads the whole file (deduplicated by the sink).
struct ResumePoint {
  std::uint64_t offset = 0;
  std::int64_t lines = 0;
};
inline constexpr const char* kResumeUnsafe = "import.resume_unsafe";

/// The only way importers write: wraps the store's append with idempotence (same id and payload,
/// or the same payload at another place in a rewritten file: skipped and counted), conflict handling (same id, different payload: stored under
/// "<id>~<8 hex of digest>" with metadata.duplicate_of and a warning, so nothing is lost),
/// missing predecessors (stored as a root with metadata.missing_predecessor and a warning), and
/// HEAD (moved with cause "import" only when the session has none or the new node extends it).
/// The caller (import driver) holds the write transaction.
class ImportSink {
 public:
  ImportSink(Store& store, ImportResult& result, std::string file);

  const std::string& file() const { return file_; }
  Store& store() { return store_; }

  void warn(std::int64_t line, const std::string& code, const std::string& message);

  /// Creates the session when absent and starts counting for it. format is the importer name.
  void begin_session(SessionInfo info);

  /// Appends a node to a session begun before. A predecessor that is neither stored nor appended
  /// in this import, or that belongs to another session (a chain never crosses sessions, I2),
  /// makes the node a root keeping the id in metadata.missing_predecessor (warning
  /// "parent.missing" at `line`). Returns the id actually stored (or already present).
  std::string add(Node n, std::int64_t line);

  /// True when id is stored (before or during this import).
  bool has(const std::string& id);

  /// The resume point of an incremental import (only the Claude Code importer honours it; the
  /// caller sets it only for that format).
  void set_resume(ResumePoint r) { resume_ = r; }
  const std::optional<ResumePoint>& resume() const { return resume_; }

  /// Incremental import (import_home, docs/formats/claude-code.md "Read while it is written"):
  /// the importer stores only what appended lines cannot change, and leaves the open turn at the
  /// end of the file (see held()) for the next run. Off: every record is stored (a one-off import
  /// of a finished file). Only the Claude Code importer honours it.
  void set_hold_open_turn(bool on) { hold_open_turn_ = on; }
  bool hold_open_turn() const { return hold_open_turn_; }
  /// With hold_open_turn: the agent's last reply is complete (its turn ended: Claude Code's Stop
  /// and SessionEnd hooks), so only what follows the last assistant message is held back.
  void set_reply_done(bool on) { reply_done_ = on; }
  bool reply_done() const { return reply_done_; }
  /// Set by an importer that held records back: where the first of them starts (the byte offset
  /// of its physical line and the number of physical lines before it). The next run resumes there.
  void hold_from(ResumePoint r) { held_ = r; }
  const std::optional<ResumePoint>& held() const { return held_; }

  /// The record limit in bytes (docs/import.md "Bad input, by class"): a JSONL line or a whole
  /// JSON document longer than this is reported and skipped. ImportOptions::max_record_bytes.
  std::uint64_t max_record_bytes() const { return max_record_bytes_; }
  void set_max_record_bytes(std::uint64_t n) { max_record_bytes_ = n; }

  /// Keeps a source line that is not a node, verbatim.
  void keep_record(const std::string& session, std::int64_t line, const std::string& type, const std::string& raw);

  /// Proposes node_id as the session's HEAD after import: applied when the session has no HEAD or
  /// when node_id descends from the current HEAD (the chain grew). Otherwise HEAD stays.
  void propose_head(const std::string& session, const std::string& node_id);

  /// For a file read while it grows (the Claude Code importer): the newest leaf in file order is
  /// HEAD, as one import of the whole file makes it. When node_id was added by this import and
  /// the session's HEAD was last moved by an import (not by append, checkout, rewind or fork),
  /// HEAD moves to node_id even off the current HEAD's chain (a resumed client session that starts
  /// a new root, a branch). Otherwise as propose_head.
  void follow_file(const std::string& session, const std::string& node_id);

  /// For a source that rewrites its own history (Gemini CLI's `$set.messages`): when node_id was
  /// added by this import and the current HEAD is one of `source_nodes` (a node the same source
  /// holds, which the rewrite left on another branch), HEAD moves to node_id (cause "import": the
  /// client moved on). Otherwise as propose_head.
  void follow_rewrite(const std::string& session, const std::string& node_id, const std::set<std::string>& source_nodes);

 private:
  // The node this sink stored last (added or found a duplicate) and its session: add() reads a
  // predecessor's session from them instead of a statement when the predecessor is that node.
  std::string last_id_;
  std::string last_session_;
  SessionImport& entry(const std::string& session);
  /// The stored node (n.id or one of its "<id>~<hex>" conflict copies) that differs from n only
  /// in metadata.source (where in the file it was read), if any.
  std::optional<std::string> same_but_moved(const Node& n);
  bool added_here(const std::string& id);
  Store& store_;
  ImportResult& result_;
  std::string file_;
  std::map<std::string, std::size_t> index_;
  std::int64_t start_seq_;  // append boundary when this import began: newer nodes are its own
  std::optional<ResumePoint> resume_;
  bool hold_open_turn_ = false;
  bool reply_done_ = false;
  std::optional<ResumePoint> held_;
  std::uint64_t max_record_bytes_ = JsonlReader::kDefaultMaxRecord;
};

/// Importer names accepted by --format: auto, claude-code, codex, gemini, qwen, pi, copilot, cline, opencode,
/// kilo, openai, anthropic, openhands, ctxfold.
std::vector<std::string> import_formats();

/// Detects the format of a file from its name and first bytes. `label` names the input in errors
/// (for stdin, which is read from a spooled temporary file). Throws Error(bad_input,
/// "import.empty") for a file with nothing but whitespace and Error(bad_input,
/// "import.unknown_format") when nothing matches, Error(bad_input, "import.ambiguous_format") when
/// records of Claude Code's envelope fit two formats (docs/import.md "Detection"); both name the
/// file and line.
std::string detect_format(const std::string& path, const std::string& label = {});

struct ImportOptions {
  std::string format = "auto";
  bool strict = false;  ///< any warning aborts the whole import: exit 3, nothing written
  /// The record limit in bytes (`--max-record-bytes`, default 64 MiB): a longer line is
  /// skipped with a "line.too_long" warning, a longer document with "document.too_large".
  std::uint64_t max_record_bytes = JsonlReader::kDefaultMaxRecord;
};

/// Imports each path (a file; "-" reads stdin, spooled to a temporary file) in its own write
/// transaction. Claude Code main files also import their `<stem>/subagents/*.jsonl`.
ImportResult import_paths(Store& store, const std::vector<std::string>& paths, const ImportOptions& opts);

/// A per-format importer: reads path, writes through sink.
using ImportFn = void (*)(const std::string&, ImportSink&);
/// The importer of a format name (not "auto"); Error(usage, "import.unknown_format") otherwise.
ImportFn importer_for(const std::string& format);

// Per-format importers: read path, write through sink. They never throw on bad lines (warn and
// keep going); they throw Error(environment) only when the file cannot be read.
void import_claude_code(const std::string& path, ImportSink& sink);
/// The 2.1.x subagent transcripts of a Claude Code main file: `<dir>/<stem>/subagents/agent-*.jsonl`,
/// sorted by name (empty when there are none). Each is imported by calling import_claude_code on
/// it after the main file: it becomes the sidechain session "<stem>/agent-<agentId>".
std::vector<std::string> claude_code_subagent_files(const std::string& main_path);
void import_codex(const std::string& path, ImportSink& sink);
void import_gemini(const std::string& path, ImportSink& sink);
void import_openai_messages(const std::string& path, ImportSink& sink);
void import_anthropic_messages(const std::string& path, ImportSink& sink);
/// Cline CLI's `<id>.messages.json` (docs/formats/cline.md): Anthropic-shaped messages with the
/// session file beside it as session metadata; a sub-agent's file as a sidechain session.
void import_cline(const std::string& path, ImportSink& sink);
void import_openhands(const std::string& path, ImportSink& sink);
void import_ctxfold_jsonl(const std::string& path, ImportSink& sink);

}  // namespace ctxfold
