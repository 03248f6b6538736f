#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "model/node.hpp"

namespace ctxfold {

/// Kinds of identifier a compaction can drop (issue 10 "dropped report"): a file path, a shell
/// command (a tool call's "command"/"cmd" input, whitespace collapsed), a URL, an error message
/// (a line of an error tool result, or one naming an error/failure), a tool-call id, and a
/// number with a unit ("150 ms", "2.5GB", "30%", "12k tokens").
namespace ident {
inline constexpr const char* kPath = "path";
inline constexpr const char* kCommand = "command";
inline constexpr const char* kUrl = "url";
inline constexpr const char* kError = "error";
inline constexpr const char* kToolCall = "tool_call_id";
inline constexpr const char* kNumber = "number";
}  // namespace ident

/// Receives (kind, value) pairs.
using IdentSink = std::function<void(const char* kind, std::string value)>;

/// Scans one line of text for file paths and URLs: a path is a token of path characters with a
/// known file extension, or a rooted (/, ./, ../, ~/) path with a slash; a trailing ":LINE" is
/// dropped. The rule the extractive summarizer's "## Files" section uses too.
void scan_paths_and_urls(std::string_view line, const std::function<void(std::string_view)>& on_path,
                         const std::function<void(std::string_view)>& on_url);

/// The file paths a tool call's input names as arguments — the paths a summary may list as real
/// (docs/strategies.md "The extractive summary"): path-valued inputs ("file_path", "path",
/// "notebook_path", "filePath", "file", "filename", "absolute_path", "dir_path", "directory"), the
/// files of a Codex apply_patch ("*** Add File: P", "*** Update File: P", "*** Delete File: P",
/// "*** Move to: P"), and the paths scan_prose_paths finds in its command. A glob pattern ("*")
/// is not a path; file contents (Write "content", Edit strings) are never scanned.
void tool_argument_paths(const Json& input, const std::function<void(std::string_view)>& on_path);

/// scan_paths_and_urls for prose and commands, without what only looks like a path: a token right
/// after '<' (markup: "</span>"), a rooted path of one component without a file extension ("/api",
/// "/div"), and device or process paths ("/dev/null", "/proc/self").
void scan_prose_paths(std::string_view line, const std::function<void(std::string_view)>& on_path,
                      const std::function<void(std::string_view)>& on_url);

/// True for a line reporting an error or failure (English markers: error, failed, exception,
/// traceback, not found, denied, exit code, ...; the first 400 bytes are read).
bool is_error_line(std::string_view line);

/// The shell command of a tool call input ("command" or "cmd", string or argv array), whitespace
/// collapsed; empty when it has none.
std::string tool_command(const Json& input);

/// Collapses runs of whitespace to one space and trims both ends.
std::string collapse_space(std::string_view s);

/// Every identifier of a node's content (text, tool calls and their inputs, tool results), in
/// content order; the same value can be reported more than once.
void node_identifiers(const Node& n, const IdentSink& sink);

/// Whether `summary` keeps an identifier: paths by their file name (the last path component),
/// numbers in either spacing ("150ms"/"150 ms"), error messages by their first 60 bytes, the
/// rest verbatim. `summary` should be as written (case-sensitive comparison).
bool summary_keeps(std::string_view summary, const char* kind, const std::string& value);

}  // namespace ctxfold
