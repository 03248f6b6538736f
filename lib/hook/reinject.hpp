#pragma once
// What `ctxfold hook` hands an agent after a compaction: the identifiers its own summary left out,
// each with the ctxfold command that recalls it from the archive (docs/commands.md "hook",
// "Re-injected context").
#include <cstdint>
#include <optional>
#include <string>

#include "store/store.hpp"

namespace ctxfold {

/// The bounds and names of the re-injected context.
struct ReinjectOptions {
  std::string db;                 ///< the archive as the recall commands name it (--db); shell-quoted here
  std::size_t max_bytes = 4000;   ///< the text's bound in bytes (UTF-8), the header and footer included
  /// True right after the agent compacted (SessionStart source "compact"): the newest compaction
  /// the archive holds may not be the one that just happened, since Claude Code writes the
  /// summary to its transcript after the SessionStart hooks returned (measured with 2.1.332).
  bool just_compacted = false;
  std::string agent = "Claude Code";  ///< named in the text
};

/// The text and what it rests on.
struct Reinjected {
  std::string text;  ///< empty when there is nothing to say (no compaction, no identifier)
  /// "dropped": the newest compaction's summary is in the archive and these are the identifiers
  /// of its covered history it does not keep (forensics/compactions.hpp, the `compactions`
  /// report). "compacted": the agent just compacted and its summary is not archived yet: the
  /// identifiers of the history since the previous compaction (the summary may keep some).
  /// "none": nothing to report.
  std::string basis = "none";
  std::optional<std::string> summary_id;  ///< "dropped": the compaction's summary node
  std::int64_t identifiers = 0;           ///< how many the basis holds
  std::int64_t shown = 0;                 ///< how many the text lists (the rest did not fit)
};

/// The context to re-inject for `session` of the archive (read-only). Identifiers are listed
/// one of each kind in turn (paths, commands, errors, URLs, tool-call ids, numbers), first seen
/// first within a kind, each as "- KIND VALUE: ctxfold --db DB --session S grep ARGS" (a
/// tool-call id, which grep does not search, as "... show NODE", the node holding it): ARGS is
/// `-- 'VALUE'` for a value without whitespace, else `--regex -- 'W1\s*W2...'` (its words,
/// since identifiers have their whitespace collapsed), at most the value's first 60 bytes, cut
/// on a UTF-8 boundary; values longer than 120 bytes are shown cut with "…". Whole lines only,
/// then "(N more not listed.)": the text never exceeds opts.max_bytes (a bound too small for
/// the header and one line gives an empty text).
Reinjected reinject_context(Store& store, const std::string& session, const ReinjectOptions& opts);

/// `s` quoted for a POSIX shell: as is when it holds only safe characters ([A-Za-z0-9_./:@%+=,-]),
/// else in single quotes with each ' written '\''.
std::string shell_quote(const std::string& s);

}  // namespace ctxfold
