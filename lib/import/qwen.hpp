// Qwen Code chat recordings (docs/formats/qwen-code.md).
#pragma once

#include <string>

#include "import/import.hpp"

namespace ctxfold {

/// Imports one Qwen Code chat recording (`<runtime>/projects/<cwd>/chats/<sessionId>.jsonl`):
/// user, assistant and tool_result records as message nodes (Gemini-style parts converted as the
/// Gemini importer converts them; usageMetadata as metadata.usage), a system chat_compression
/// record as a summary view node covering the chain before it (compressedHistory as its content,
/// metadata.replacement_history telling its messages apart), every other record kept as a source
/// record. Never throws on bad lines; Error(environment) when the file cannot be read.
void import_qwen(const std::string& path, ImportSink& sink);

}  // namespace ctxfold
