// GitHub Copilot CLI session event logs (docs/formats/copilot-cli.md).
#pragma once

#include <string>

#include "import/import.hpp"

namespace ctxfold {

/// Imports one Copilot CLI event log (`<COPILOT_HOME>/session-state/<sessionId>/events.jsonl`):
/// user.message as user nodes (the text the model read: transformedContent), assistant.message as
/// assistant nodes (content, reasoningText as thinking, toolRequests as tool_use; the
/// session.usage_record before it as metadata.usage), tool.execution_complete as tool nodes
/// (tool_result, is_error when success is false), system.message as metadata.system_prompt of the
/// node before it, session.compaction_complete as a summary view node covering the chain before it
/// (the summary message the client sends next, rebuilt from summaryContent and the user messages),
/// events of a sub-agent (an agentId) as the sidechain session "<sessionId>/agent-<agentId>"
/// launched by the node that requested its tool call; every other event is kept as a source record. Never throws on
/// bad lines; Error(environment) when the file cannot be read.
void import_copilot(const std::string& path, ImportSink& sink);

}  // namespace ctxfold
