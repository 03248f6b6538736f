#pragma once
// The hook's write: the transcript a hook payload names, imported incrementally into the archive.
#include <cstdint>
#include <string>

#include "hook/payload.hpp"
#include "store/store.hpp"

namespace ctxfold {

/// What one hook call added.
struct HookArchive {
  std::string session;          ///< the archive's session of the transcript (the importer's: the file's stem)
  std::string outcome;          ///< import --from's outcome of the transcript: new, appended, rewritten, touched, unchanged
  std::int64_t nodes_added = 0;  ///< over the transcript and its sub-agent files
  std::int64_t bytes_read = 0;
  std::int64_t warnings = 0;    ///< source warnings (a cut last line is one, read again next time)
};

/// Imports p.transcript_path (and a Claude Code transcript's sub-agent files) as `agent`'s format
/// ("claude-code" or "codex") through import_home's incremental path: a file unchanged since the
/// last call is not opened, one that grew is read from where the last call stopped, a cut last
/// line is left for the next call. Errors: Error(bad_input, "import.no_file") for a transcript
/// that does not exist (nothing written); Error(environment, "hook.import") when the transcript
/// cannot be read (what it added undone).
HookArchive archive_transcript(Store& store, const HookPayload& p, const std::string& agent);

}  // namespace ctxfold
