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

/// A file the covered history read or changed (forensics/tool_events.hpp) whose path the summary
/// does not keep (model/identifiers.hpp summary_keeps: by file name): what was done to it (events
/// per action), how its last event ended, and the node of its first event.
struct DroppedFile {
  std::string path;
  std::map<std::string, std::int64_t> actions;
  std::string last_result;
  std::string node;
};

/// A shell command of the covered history the summary does not keep verbatim, with its recorded
/// exit code (null when none was recorded) and result; once per distinct command, its last run.
struct DroppedCommand {
  std::string command;
  std::optional<int> exit_code;
  std::string result;
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
  std::int64_t files_found = 0;                ///< distinct files the covered tool calls touched
  std::int64_t commands_found = 0;             ///< distinct shell commands the covered tool calls ran
  std::vector<DroppedFile> dropped_files;      ///< first-touched order
  std::vector<DroppedCommand> dropped_commands;  ///< first-run order
};

/// Every compaction of session with its dropped report. Read-only. Cost: every covered node is
/// read once per compaction covering it.
std::vector<CompactionEntry> session_compactions(Store& store, const std::string& session);

/// One compaction record of schema ctxfold.compactions/1 as its fields, in order
/// (docs/commands.md "compactions"): {"session","summary_id","seq","origin","strategy","trigger",
/// "timestamp","boundary","tokens_before","tokens_after" ({"tokens","label"} or null),
/// "covers":{"first","last","count"},"summary_bytes","covered_bytes","found" (per kind),
/// "dropped_count" (per kind, every kind of found present),"dropped":[{"kind","value","node"}],
/// "files":{"found","dropped_count","dropped":[{"path","actions","result","node"}]},
/// "commands":{"found","dropped_count","dropped":[{"command","exit_code","result","node"}]}}.
/// Each dropped list holds its items from index `offset` on, at most `limit` of them (negative:
/// all); the counts stay whole. The one definition `compactions` prints and `mcp`'s dropped tool
/// returns.
Json compaction_record(const std::string& session, const CompactionEntry& c, std::int64_t offset, std::int64_t limit);

}  // namespace ctxfold
