#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

// The covered history as the extractive summarizer reads it (docs/strategies.md "The extractive
// summary"): a summarizer transcript (summarize/transcript.hpp layout) parsed back into turns, one
// per real user request, with the tool calls, commands, errors and statements of each.
namespace ctxfold {

/// One tool call of the transcript and what its result said.
struct HistoryCall {
  std::string name;                 ///< tool name ("Bash", "Edit", "exec_command", ...)
  std::string id;                   ///< tool_use id
  Json input;                       ///< parsed input, null when it was shortened past parsing
  std::string command;              ///< its shell command (model/identifiers.hpp tool_command), may be empty
  std::vector<std::string> paths;   ///< its path arguments (tool_argument_paths), first-seen order
  bool answered = false;            ///< a "[tool result id=ID]" followed
  bool error = false;               ///< the result was marked ", error" or reported a non-zero exit code
  std::optional<int> exit_code;     ///< "Exit code N" / "exit_code": N / "Process exited with code N"
  std::string error_line;           ///< the result's first error-looking line (collapsed), when error
  bool resolved = false;            ///< error only: a later call with the same key() succeeded
  std::string commit;               ///< first line of a `git commit` message, when the call succeeded
  /// What a later success must share to resolve an error: "tool:path" for file tools, "$ first
  /// two words" (after any leading "cd DIR &&") for commands, else the tool name.
  std::string key() const;
};

/// One real user request and the agent's work until the next one.
struct HistoryTurn {
  std::string request;              ///< the request text, whitespace collapsed ("" before the first request)
  std::vector<std::size_t> calls;   ///< indexes into History::calls, in order
  std::string outcome;              ///< the turn's last assistant text (collapsed), when it ends the turn
  bool completed = false;           ///< the turn's last assistant message is text with no call after it
  std::string last_text;            ///< the turn's last assistant text, finished or not
};

/// One item of a plan (TodoWrite todos[], update_plan plan[]).
struct PlanItem {
  std::string text;
  std::string status;               ///< "completed", "in_progress", "pending" (as written)
};

/// Everything read from one transcript.
struct History {
  std::vector<HistoryCall> calls;
  std::vector<HistoryTurn> turns;
  std::vector<std::string> summaries;       ///< embedded summaries ([earlier summary], [summary ...]) to merge
  std::vector<std::string> prose_paths;     ///< paths written in user or assistant text, first-seen order
  std::vector<std::string> identifiers;     ///< `backticked` names and URLs of user or assistant text
  std::vector<std::string> focus;           ///< lines matching the focus words
  std::vector<PlanItem> plan;               ///< the last plan written, empty when none
  std::string last_statement;               ///< the last assistant text of the transcript (collapsed)
  std::map<std::string, std::int64_t> tools;  ///< calls per tool name
  std::int64_t harness_texts = 0;           ///< "[harness ...]" sections skipped (not requests)
};

/// Parses a summarizer transcript. `focus_words` are lower-case words whose lines go to focus.
/// Never throws: unknown lines are read as text of the section they are in.
History parse_history(std::string_view transcript, const std::vector<std::string>& focus_words);

/// The first line of the message a `git commit` command gives (-m "...", -m '...', or the first
/// line of a heredoc), empty when the command commits nothing it names.
std::string commit_message(std::string_view command);

}  // namespace ctxfold
