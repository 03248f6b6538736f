#pragma once
// Internal to lib/forensics/tool_events*.cpp: one tool call being read, and the per-agent rules
// that turn its name and input into file and command events (tool_shapes.cpp).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "forensics/tool_events.hpp"

namespace ctxfold::tool_detail {

/// A tool call from its tool_use until its result settles it.
struct PendingCall {
  ToolCallSite site;
  Json input;
  std::vector<FileEvent> files;         ///< skeletons: action, via, paths, edit (result unknown)
  std::optional<CommandEvent> command;  ///< a skeleton when the call runs a shell command
  bool settled = false;
};

/// Fills c.files and c.command from c.site.tool and c.input (the paths not yet normalized:
/// path_as_written only). Unknown tools give nothing.
void classify_call(PendingCall& c);

/// {"bytes","lines","sha256"} of a whole file's new content.
Json content_digest(std::string_view content);

/// The shell script of a command input ("command"/"cmd": a string, or an argv whose shell -c
/// script is its last element, else the argv joined with spaces); nullopt when there is none.
std::optional<std::string> shell_script(const Json& input);

}  // namespace ctxfold::tool_detail
