#pragma once
// The recall tools `ctxfold mcp` exposes (docs/commands.md "mcp"): each a row of one table that
// gives its name, its arguments (from which both its input JSON Schema and the validation of a
// call come) and the function that runs it over one read snapshot of the store.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold::mcp {

/// The JSON type of one tool argument.
enum class ArgType { string, integer, boolean };

/// One argument of a tool. For a string, `max` is its largest length in bytes and `choices`, when
/// not empty, the values it may take; for an integer, [min, max] is its range. Arguments whose
/// names are not in the table are refused (the schema says additionalProperties false).
struct ToolArg {
  const char* name;
  ArgType type;
  const char* description;
  bool required = false;
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::vector<std::string> choices = {};
  std::optional<Json> default_value = std::nullopt;
};

/// What a tool call may use beyond its arguments: the result bound and the default session: the
/// call's `session` argument, else `ctxfold --session` / CTXFOLD_SESSION of the `mcp` process,
/// else the calling agent's session when archived, else the store's rule (docs/commands.md
/// "Choosing the session").
struct ToolLimits {
  /// The largest result, in tokens as tokens/estimate.hpp estimate_text_tokens counts the result's
  /// JSON text; a page that would be larger is shortened and its next_offset says where to go on.
  std::int64_t max_tokens = 4000;
  std::optional<std::string> session;
  /// The calling agent's own session id, as the agent tells the server it starts (Claude Code:
  /// CLAUDE_CODE_SESSION_ID): the default after `session` when the archive holds that session;
  /// ignored when it does not (not imported yet).
  std::optional<std::string> agent_session;
};

/// One tool: name, a one-line title, the description the model reads, its arguments, and run,
/// which returns the result document (a JSON object) or throws an Error (the CLI's message),
/// reported to the client as a tool error.
struct Tool {
  const char* name;
  const char* title;
  const char* description;
  std::vector<ToolArg> args;
  std::function<Json(Store& st, const Json& args, const ToolLimits& limits)> run;
};

/// The tools, in the order tools/list gives them: grep, expand, describe, list, sessions, dropped.
const std::vector<Tool>& tool_table();

/// The tool named `name`, or nullptr.
const Tool* find_tool(const std::string& name);

/// The tool's input JSON Schema (draft 2020-12 keywords that draft-07 shares): an object with
/// "properties" built from Tool::args (type, description, maxLength / minimum, maximum / enum,
/// default), "required" and additionalProperties false.
Json input_schema(const Tool& tool);

/// Checks `args` (a JSON object) against the tool's arguments and returns them with the defaults
/// filled in. Errors: Error(usage,"mcp.arguments") naming the argument and what is wrong (unknown,
/// missing, wrong type, out of range, too long, not one of the choices): a tool error for the
/// model to correct (MCP 2025-11-25 "Tools": input validation errors are tool execution errors).
Json check_arguments(const Tool& tool, const Json& args);

/// How many tokens the result document counts against ToolLimits::max_tokens: the estimate of its
/// compact JSON text (dump_json).
std::int64_t result_tokens(const Json& result);

}  // namespace ctxfold::mcp
