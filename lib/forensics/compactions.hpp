#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// An identifier found in the history a compaction covered but not in its summary, with the
/// covered node it first appeared in (so `expand`/`grep`/`show` can reach it). kind is one of
/// model/identifiers.hpp's ident:: names.
struct DroppedItem {
  std::string kind;
  std::string value;
  std::string node;
};

/// A token figure and where it comes from: "measured" when the agent or provider recorded it
/// (Claude compactMetadata.preTokens/postTokens), "estimated" for ctxfold's local estimate.
struct CompactionTokens {
  std::int64_t value = 0;
  std::string label;
};

/// One compaction of a session: an imported one (origin "claude-code" compact_boundary, "codex"
/// compacted) or ctxfold's own (origin "ctxfold": rolling/lcm summaries), oldest first.
struct CompactionEntry {
  std::string summary_id;
  std::int64_t seq = 0;
  std::string origin;
  std::string strategy;
  std::optional<std::string> trigger;  ///< Claude "manual"|"auto"; ctxfold "forced"|"threshold"
  std::optional<std::string> timestamp;
  std::optional<std::string> boundary;  ///< Claude: the compact_boundary node
  std::optional<CompactionTokens> tokens_before, tokens_after;
  std::string covers_first, covers_last;
  std::int64_t covers_count = 0;
  std::int64_t summary_bytes = 0;
  std::int64_t covered_bytes = 0;  ///< text bytes of the covered nodes (node_text)
  std::map<std::string, std::int64_t> found;  ///< distinct identifiers per kind in the covered history
  std::vector<DroppedItem> dropped;            ///< those the summary does not keep, first-seen order
};

/// Every compaction of session with its dropped report. Read-only. Cost: every covered node is
/// read once per compaction covering it.
std::vector<CompactionEntry> session_compactions(Store& store, const std::string& session);

/// One compaction record of schema ctxfold.compactions/1 as its fields, in order
/// (docs/commands.md "compactions"): {"session","summary_id","seq","origin","strategy","trigger",
/// "timestamp","boundary","tokens_before","tokens_after" ({"tokens","label"} or null),
/// "covers":{"first","last","count"},"summary_bytes","covered_bytes","found" (per kind),
/// "dropped_count" (per kind, every kind of found present),"dropped":[{"kind","value","node"}]}.
/// dropped lists the items from index `offset` on, at most `limit` of them (negative: all);
/// the counts stay whole. The one definition `compactions` prints and `mcp`'s dropped tool
/// returns.
Json compaction_record(const std::string& session, const CompactionEntry& c, std::int64_t offset, std::int64_t limit);

}  // namespace ctxfold
