#include "model/user_text.hpp"

#include <string>

namespace ctxfold {
namespace {

bool opens_with(std::string_view t, std::string_view p) { return t.substr(0, p.size()) == p; }

std::string_view trim_front(std::string_view t) {
  std::size_t b = t.find_first_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string_view() : t.substr(b);
}

/// A hook's output: the phrases hook results use ("<Event>:<Tool> hook additional context:",
/// "... hook blocking error from command:") and, inside a reminder, "<Event>:<Tool> hook ..." or
/// "<Event> hook ..." with a Claude Code hook event name on the first line.
bool names_a_hook(std::string_view body, bool in_reminder) {
  static constexpr std::string_view kEvents[] = {"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart",
                                                 "Stop", "SubagentStop", "PreCompact", "Notification", "SessionEnd"};
  const std::string_view first = body.substr(0, body.find('\n'));
  const bool phrase = first.find(" hook additional context:") != std::string_view::npos ||
                      first.find(" hook blocking error from command:") != std::string_view::npos;
  for (auto e : kEvents)
    if (opens_with(body, e) && body.size() > e.size() && (body[e.size()] == ':' || body[e.size()] == ' '))
      return phrase || (in_reminder && first.find(" hook") != std::string_view::npos);
  return in_reminder && phrase;
}

}  // namespace

const char* user_text_class_name(UserTextClass c) {
  switch (c) {
    case UserTextClass::request: return "request";
    case UserTextClass::tool_result: return "tool_result";
    case UserTextClass::meta: return "meta";
    case UserTextClass::hook_output: return "hook_output";
    case UserTextClass::system_reminder: return "system_reminder";
    case UserTextClass::slash_command: return "slash_command";
    case UserTextClass::command_output: return "command_output";
    case UserTextClass::caveat: return "caveat";
    case UserTextClass::task_notification: return "task_notification";
    case UserTextClass::environment: return "environment";
    case UserTextClass::interrupted: return "interrupted";
    case UserTextClass::compaction_prompt: return "compaction_prompt";
  }
  return "request";
}

UserTextClass classify_user_text(std::string_view text) {
  std::string_view t = trim_front(text);
  if (t.empty()) return UserTextClass::request;
  if (opens_with(t, "<system-reminder>")) {
    std::string_view body = trim_front(t.substr(std::string_view("<system-reminder>").size()));
    return names_a_hook(body, true) ? UserTextClass::hook_output : UserTextClass::system_reminder;
  }
  if (opens_with(t, "<user-prompt-submit-hook>") || names_a_hook(t, false)) return UserTextClass::hook_output;
  for (std::string_view p : {"<command-name>", "<command-message>", "<command-args>"})
    if (opens_with(t, p)) return UserTextClass::slash_command;
  for (std::string_view p : {"<local-command-stdout>", "<local-command-stderr>", "<bash-input>", "<bash-stdout>",
                             "<bash-stderr>"})
    if (opens_with(t, p)) return UserTextClass::command_output;
  if (opens_with(t, "<local-command-caveat>") || opens_with(t, "Caveat: The messages below"))
    return UserTextClass::caveat;
  if (opens_with(t, "<task-notification>")) return UserTextClass::task_notification;
  for (std::string_view p : {"<environment_context>", "<user_instructions>", "<skills_instructions>",
                             "# AGENTS.md instructions", "<INSTRUCTIONS>"})
    if (opens_with(t, p)) return UserTextClass::environment;
  if (opens_with(t, "[Request interrupted by user") || opens_with(t, "<turn_aborted>"))
    return UserTextClass::interrupted;
  if (opens_with(t, "You are performing a CONTEXT CHECKPOINT COMPACTION")) return UserTextClass::compaction_prompt;
  return UserTextClass::request;
}

UserTextClass classify_user_node(const Node& n) {
  if (n.role == role::kTool || !is_user_turn(n)) return UserTextClass::tool_result;
  bool any_request = false;
  bool have_other = false;
  UserTextClass other = UserTextClass::request;
  auto see = [&](std::string_view text) {
    if (trim_front(text).empty()) return;
    UserTextClass c = classify_user_text(text);
    if (c == UserTextClass::request) any_request = true;
    else if (!have_other) other = c, have_other = true;
  };
  if (n.content.is_string()) {
    see(n.content.get_ref<const std::string&>());
  } else if (n.content.is_array()) {
    for (const auto& b : n.content) {
      if (b.is_string()) see(b.get_ref<const std::string&>());
      else if (b.is_object() && json_str(b, "type") == "text") see(json_str(b, "text"));
    }
  }
  const bool meta = [&] {
    auto m = n.metadata.find("is_meta");
    return m != n.metadata.end() && m->is_boolean() && m->get<bool>();
  }();
  if (meta) return have_other ? other : UserTextClass::meta;
  if (any_request || !have_other) return UserTextClass::request;
  return other;
}

}  // namespace ctxfold
