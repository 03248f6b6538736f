#pragma once
#include <string_view>

#include "model/node.hpp"

namespace ctxfold {

/// What a user-role text is (docs/model.md "User text classes"): a request a person typed, or
/// one of the things a client sends in the user role that nobody typed. One vocabulary for every
/// consumer (summarizers, benchmarks, recaps): the importers store the client's own markers
/// (metadata.is_meta, tool_result blocks) and the text as written; this classifies them.
enum class UserTextClass {
  request,            ///< a real user request or reply
  tool_result,        ///< a node that only answers tool calls (role tool, or only tool_result blocks)
  meta,               ///< metadata.is_meta (Claude Code isMeta: skill text, injected context)
  hook_output,        ///< a hook's output ("PostToolUse:Edit hook additional context: ...",
                      ///< "... hook blocking error from command: ...", <user-prompt-submit-hook>)
  system_reminder,    ///< other <system-reminder> text the client adds
  slash_command,      ///< a slash-command wrapper (<command-name>, <command-message>, <command-args>)
  command_output,     ///< local command output (<local-command-stdout>, <bash-stdout>, <bash-input>, ...)
  caveat,             ///< "Caveat: The messages below ..." / <local-command-caveat>
  task_notification,  ///< <task-notification> (a background task finished)
  environment,        ///< Codex context: <environment_context>, <user_instructions>, "# AGENTS.md instructions"
  interrupted,        ///< "[Request interrupted by user ...]", <turn_aborted>
  compaction_prompt,  ///< a client's own summarization request ("You are performing a CONTEXT CHECKPOINT COMPACTION")
};

/// The class's stable name, as the summarizer transcript writes it ("[harness NAME]"):
/// "request", "tool_result", "meta", "hook_output", "system_reminder", "slash_command",
/// "command_output", "caveat", "task_notification", "environment", "interrupted",
/// "compaction_prompt".
const char* user_text_class_name(UserTextClass c);

/// Classifies one text by its opening (leading whitespace skipped; a <system-reminder> is read
/// inside for a hook's name). Text of no known harness shape is a request; empty text too.
UserTextClass classify_user_text(std::string_view text);

/// Classifies a user-role node: tool_result when it carries only tool results (role tool
/// included), else the class of its text blocks (the first block's that is not a request when
/// some are harness text and none is a request) with metadata.is_meta turning a request into
/// meta. A node that is not a user or tool message (assistant, system, view, event) is a request
/// by this rule's reading: callers check the role first.
UserTextClass classify_user_node(const Node& n);

}  // namespace ctxfold
