#pragma once
// An agent's hook payload: the JSON object Claude Code (and Codex, whose hooks take the same
// fields) writes on a hook command's stdin (docs/commands.md "hook").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxfold {

/// The events `ctxfold hook AGENT` acts on: PreCompact, PostCompact, SessionStart, SessionEnd,
/// Stop, SubagentStop (docs/commands.md "hook").
const std::vector<std::string>& hook_events();

/// The fields ctxfold reads of a payload; the others are ignored.
struct HookPayload {
  std::string event;            ///< hook_event_name, one of hook_events()
  std::string session_id;       ///< session_id as the agent names it
  std::string transcript_path;  ///< the transcript file the agent writes (absolute)
  std::string cwd;              ///< the agent's working directory ("" when absent)
  /// SessionStart: "startup", "resume", "clear" or "compact"; PreCompact/PostCompact: the
  /// trigger ("manual" or "auto"); SessionEnd: the reason; empty otherwise.
  std::string source;
};

/// Parses and checks a payload read from stdin. Errors, all Error(bad_input): "hook.payload"
/// for text that is not one JSON object (line and column named), "hook.field" for a missing or
/// non-string session_id, transcript_path or hook_event_name (named), "hook.event" for an event
/// not in hook_events() (the known ones listed). At most 16 MiB is accepted ("hook.payload").
HookPayload parse_hook_payload(std::string_view text);

/// Whether the event may run before the agent wrote any transcript (SessionStart of a new
/// session, SessionEnd of one that never had a turn): then a missing transcript is not an error.
bool transcript_optional(const HookPayload& p);

}  // namespace ctxfold
