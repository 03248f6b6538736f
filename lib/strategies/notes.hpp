#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "store/store.hpp"
#include "strategies/compaction.hpp"
#include "summarize/summarizer.hpp"
#include "util/json.hpp"

// The notes layer (docs/strategies.md "notes"): a small bounded memory over any strategy,
// rewritten by the summarizer at every compaction and rendered first in every later request.
namespace ctxfold {

/// Prompt version of the notes rewrite (share/prompts/notes-v1.txt).
inline constexpr const char* kNotesPrompt = "notes-v1";

/// notes.budgetTokens (default 2000).
struct NotesOptions {
  bool enabled = false;  ///< notes.enabled in the config file, or `compact --notes`
  std::int64_t budget_tokens = 2000;
  std::string instructions;            ///< --instructions, passed on
  std::int64_t summarizer_window = 0;  ///< chunk to half of it (0: the summarizer's own)
};

/// Reads {"notes":{"enabled","budgetTokens"}} (budgetTokens, default 2000)
/// into opts, leaving absent keys as they are. Throws Error(bad_input,"config.invalid") for a
/// section that is not an object, enabled that is not a boolean, or budgetTokens outside 64..10^6.
void apply_notes_config(const Json& config, NotesOptions& opts);

/// The session's notes at as_of: its newest view node of kind notes (they belong to the session,
/// not the strategy, so they survive a strategy switch; a fork, another session, has none).
std::optional<Node> session_notes(Store& store, const std::string& session, std::int64_t as_of = kLatest);

/// Rewrites the session's notes after the compaction `res` committed (status "compacted"): the
/// summarizer gets the previous notes and the history newly evicted since the notes' cursor
/// (metadata.notes.cursor, the last evicted id they have read; without notes, or when the cursor is
/// no longer on the chain, everything res covers), in chunks of at most half the summarizer
/// window with the notes carried, prompt notes-v1, output limit budget*5/4 (a quarter above
/// the budget; nothing else truncates the notes). A new notes node (kind notes, id
/// "notes-<16 hex of sha256(res.summary_id)>", predecessor the last evicted id, no coverage) is appended in one
/// transaction with a compact/notes event. A failed rewrite writes nothing but the event and
/// keeps the old notes. Returns {"status":"rewritten"|"failed"|"skipped","id","previous","error",
/// "calls","evicted_rows","budget_tokens"}; never throws for a summarizer failure.
Json rewrite_notes(Store& store, const std::string& session, const CompactResult& res, Summarizer& summarizer,
                   const NotesOptions& opts);

}  // namespace ctxfold
