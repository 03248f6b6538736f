#pragma once
// The hooks `ctxfold hook install AGENT` adds to an agent's settings file and `uninstall` takes
// out again (docs/commands.md "hook"): Claude Code's settings.json or Codex's hooks.json, both a
// strict JSON object whose "hooks" maps an event name to a list of {"matcher", "hooks": [{"type":
// "command", ...}]} groups (Codex accepts only "description" and "hooks" at the top of hooks.json).
#include <optional>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace ctxfold {

/// The events install wires, in order: PreCompact, SessionStart, SessionEnd, Stop (both agents
/// send them; Codex 0.171 also starts SessionStart with source "compact" after a compaction).
const std::vector<std::string>& installed_events();

/// The hooks fragment install adds: per event of installed_events() one group
/// {"matcher": "" (PreCompact and SessionStart only), "hooks": [{"type": "command", "command":
/// command, "timeout": 60}]}.
Json hook_fragment(const std::string& command);

/// Whether a hook command is one `ctxfold hook install` wrote for `agent`: its last two words
/// are "hook AGENT" and its first names a program called ctxfold.
bool is_ctxfold_hook(const std::string& command, const std::string& agent);

/// Parses a settings file's text. Whitespace only is an empty object. Errors, all
/// Error(bad_input, "settings.invalid") naming `path`: text that is not strict JSON (line and
/// column; comments are not JSON, and Claude Code reads the file as JSON), a value that is not an
/// object, a "hooks" that is not an object, an event under "hooks" whose value is not a list.
Json parse_settings_text(const std::string& text, const std::string& path);

/// Adds command's hooks to settings (every other key, event and hook kept, in order): an event
/// that already runs exactly `command` is left as it is; other ctxfold hooks of `agent` in it
/// (another archive or binary) are replaced. Applying it twice gives the same JSON.
Json add_hooks(Json settings, const std::string& command, const std::string& agent);

/// Removes every ctxfold hook of `agent`: the hook entries, then groups and events left empty
/// by that, then "hooks" when it is left empty. `removed` counts the hook entries taken out.
Json remove_hooks(Json settings, const std::string& agent, int& removed);

/// The settings file's text as ctxfold writes it: two-space indentation and a final newline.
std::string settings_text(const Json& settings);

/// Replaces the file at `path` with `text`: the old file is first copied to `backup` (when the
/// file exists), then the new text is written beside it and renamed over it, so a failure leaves
/// the old file whole. Creates the parent folder. Error(environment, "settings.write") on failure.
void write_settings(const std::string& path, const std::string& text, const std::optional<std::string>& backup);

}  // namespace ctxfold
