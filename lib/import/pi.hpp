// pi coding agent session files (docs/formats/pi.md).
#pragma once

#include <string>

#include "import/import.hpp"

namespace ctxfold {

/// Imports one pi session file (`<agent dir>/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`): the
/// header names the session; message entries (user, assistant, toolResult, bashExecution, custom)
/// and custom_message / branch_summary entries become message nodes on the entry tree's chains
/// (id/parentId, so branches stay branches; node ids are "<session>:<entry id>"); a compaction
/// entry becomes a summary view node covering the path before its firstKeptEntryId; every other
/// entry (model_change, label, ...) is kept as a source record and passes its place on. The file's
/// last entry is pi's leaf: proposed as HEAD (ImportSink::follow_file). Never throws on bad lines;
/// Error(environment) when the file cannot be read.
void import_pi(const std::string& path, ImportSink& sink);

/// Why a JSON Lines record is not one pi writes (docs/formats/pi.md, docs/import.md "Detection"):
/// another envelope (no id and parentId), an entry type or message role pi never writes, a content
/// block type outside text, image, thinking and toolCall; "" when it fits (pi's `session` header,
/// or one of its entries).
std::string pi_misfit(const Json& record);

}  // namespace ctxfold
