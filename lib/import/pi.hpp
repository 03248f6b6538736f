// pi coding agent session files (docs/formats/pi.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

/// How the first lines of a JSON Lines file fit pi's session format (docs/formats/pi.md,
/// docs/import.md "Detection"): the first record that is pi's (a `session` header with a version
/// and cwd, or an entry with id, parentId and one of pi's entry types), and the first record that
/// is not (another envelope, an entry type or message role pi never writes, a content block type
/// outside text, image, thinking and toolCall) with the reason.
struct PiFit {
  std::int64_t pi_line = 0;
  std::int64_t misfit_line = 0;
  std::string misfit;
};
PiFit pi_fit(std::string_view text, int max_lines);

}  // namespace ctxfold
