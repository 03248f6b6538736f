#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.hpp"
#include "store/store.hpp"
#include "util/json.hpp"

// What an agent did to files and which shell commands it ran, read from the tool calls of stored
// sessions and their paired results (docs/commands.md "files" and "commands"). Unknown is
// unknown: a status, exit code, duration or edit check the data does not hold stays null or
// "unknown", never guessed.
namespace ctxfold {

/// How a tool call ended, from its paired tool_result (docs/commands.md "files", "Results"):
/// "success", "error", "rejected" (the user declined it, or a hook blocked it; rejected_by says
/// which) or "unknown" (no result, or a result that says neither: a Codex or OpenAI-chat output
/// without an exit code or success line).
namespace call_result {
inline constexpr const char* kSuccess = "success";
inline constexpr const char* kError = "error";
inline constexpr const char* kRejected = "rejected";
inline constexpr const char* kUnknown = "unknown";
}  // namespace call_result

/// The tool call an event comes from and how it ended.
struct ToolCallSite {
  std::string session;
  std::string node;                      ///< the node holding the tool_use block
  std::int64_t seq = 0;                  ///< that node's seq
  std::string tool_use_id;
  std::string tool;                      ///< the tool's name as the agent wrote it
  std::optional<std::string> timestamp;  ///< the node's metadata.timestamp (the agent's clock)
  std::optional<std::string> cwd;        ///< the working directory the call ran in, when recorded
  std::string result = call_result::kUnknown;
  std::optional<std::string> rejected_by;  ///< "user" | "hook", when result is "rejected"
  std::optional<std::string> error;        ///< the error's or rejection's first line (collapsed, <= 200 bytes)
  std::optional<std::string> result_node;  ///< the node holding the paired tool_result
};

/// One thing a tool call did to one file.
struct FileEvent {
  ToolCallSite call;
  std::string action;  ///< "read", "create", "edit", "delete", "write" (whole content, existence
                       ///< not recorded or an overwrite) or "unknown" (a patch that does not parse)
  std::string via;     ///< "tool" (a file tool), "patch" (apply_patch), "shell" (a plain shell read or rm)
  std::optional<std::string> path;           ///< normalized: "." and ".." folded, joined to cwd when relative
  std::optional<std::string> path_as_written;
  std::optional<std::string> relative_path;  ///< path relative to the call's cwd, when inside it
  /// The edit, by shape (null for reads and deletes): {"old_string","new_string","replace_all",
  /// "old_string_found"} (Edit, replace, str_replace), {"edits":[...]} (MultiEdit),
  /// {"bytes","lines","sha256"} (Write, write_file, create, an added patch file),
  /// {"hunks":[...],"added","removed","move_to"} (a patch's update), {"cell_id","edit_mode",
  /// "cell_type","new_source"} (NotebookEdit), {"insert_line","new_string"} (insert),
  /// {"patch_bytes","parsed":false} (a patch that does not parse). old_string_found is true or
  /// false when the file's content before the edit is known (the agent's own record of it, a
  /// whole-file read, a write, an earlier checked edit), null otherwise.
  Json edit;
};

/// One shell command.
struct CommandEvent {
  ToolCallSite call;
  std::optional<std::string> command;  ///< whitespace collapsed; null when the input is unreadable
  std::optional<int> exit_code;        ///< as recorded by the agent, never inferred
  std::optional<double> duration_ms;   ///< as recorded (Codex "Wall time", duration_seconds)
  std::optional<std::int64_t> output_bytes;  ///< bytes of the result text the model read
  std::optional<std::int64_t> stdout_bytes, stderr_bytes;  ///< Claude Code's toolUseResult
  std::optional<bool> interrupted;     ///< Claude Code's toolUseResult.interrupted
  bool background = false;             ///< run_in_background / a background task id
};

/// Collects the file and command events of nodes fed in seq order (one session, or any
/// contiguous part of one: a compaction's covered nodes). A tool_use is paired with the
/// tool_result of the same id; a tool_use id seen twice (a history the source file repeats) is
/// counted once. Knows Claude Code (Read, Write, Edit, MultiEdit, NotebookEdit, Bash), Codex
/// (apply_patch as a function or custom tool or inside a shell command; shell, shell_command,
/// exec_command, local_shell), Gemini CLI (read_file, read_many_files, write_file, replace,
/// run_shell_command), OpenHands (str_replace_editor, execute_bash) and plain shell reads (cat,
/// head, tail, nl, sed -n, less, more, bat) and rm of any command tool.
class ToolEventCollector {
 public:
  /// format: the session's importer format ("claude-code", "codex", ...): it says whether a
  /// result not flagged is_error means success (the formats whose importer or harness sets is_error from a
  /// real signal) or says nothing (codex, openai). cwd: the session's working directory, used
  /// when a call records none.
  ToolEventCollector(std::string format, std::optional<std::string> cwd);
  ~ToolEventCollector();
  ToolEventCollector(ToolEventCollector&&) noexcept;
  ToolEventCollector& operator=(ToolEventCollector&&) noexcept;

  /// Reads one node's tool_use and tool_result blocks (view nodes are skipped).
  void add(const Node& n);
  /// The events, in the order of their calls; a call without a result ends "unknown". Call once.
  void finish(std::vector<FileEvent>* files, std::vector<CommandEvent>* commands);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// A collector set up for a stored session (its format and working directory).
ToolEventCollector session_collector(Store& store, const std::string& session);

/// Every file and command event of a session's nodes with seq <= as_of (every branch of the
/// ledger: a call on an abandoned branch still ran). Read-only; one pass over the nodes.
void session_tool_events(Store& store, const std::string& session, std::int64_t as_of,
                         std::vector<FileEvent>* files, std::vector<CommandEvent>* commands);

/// Lexically normalized path: "." and empty components dropped, ".." folded where it can be,
/// joined to cwd when relative and cwd is given. Paths with a backslash or "~/" are left as written.
std::string normalize_path(std::string_view path, const std::optional<std::string>& cwd);

/// Whether the event's file is `query`: the same normalized path, relative path or path as
/// written, or (query relative) a path ending in "/" + query.
bool path_matches(const FileEvent& e, std::string_view query);

/// One record of ctxfold.files/1 (docs/commands.md "files"): {"session","node","seq",
/// "tool_use_id","tool","timestamp","action","via","path","path_as_written","relative_path","cwd",
/// "edit","result","rejected_by","error","result_node"}.
Json file_event_record(const FileEvent& e);

/// One record of ctxfold.commands/1 (docs/commands.md "commands"): {"session","node","seq",
/// "tool_use_id","tool","timestamp","command","cwd","exit_code","duration_ms","output_bytes",
/// "stdout_bytes","stderr_bytes","interrupted","background","result","rejected_by","error",
/// "result_node"}.
Json command_event_record(const CommandEvent& e);

}  // namespace ctxfold
