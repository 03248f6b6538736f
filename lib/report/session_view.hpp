#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "forensics/compactions.hpp"
#include "forensics/index.hpp"
#include "forensics/tool_events.hpp"
#include "forensics/usage.hpp"
#include "render/render.hpp"
#include "report/report.hpp"

namespace ctxfold::report_detail {

/// Usage of one model in one session: recorded responses, tokens, and cost in micro-units when
/// share/prices.json prices the model (nullopt: unknown, never zero).
struct UsageRow {
  std::string model;
  std::int64_t messages = 0;
  UsageTokens tokens;
  std::optional<std::int64_t> cost_micro;
};

/// What the sections of one session read, loaded once (docs/report.md): its index entry, the
/// render, the compactions with their dropped reports, usage per model, and the sessions it
/// launched (sub-agents by the node that launched them), its file and command events.
struct SessionView {
  SessionIndexEntry entry;
  Rendered rendered;
  std::vector<CompactionEntry> compactions;
  std::vector<UsageRow> usage;
  std::vector<const SessionIndexEntry*> children;
  std::map<std::string, std::vector<const SessionIndexEntry*>> launched;  ///< parent_node → sub-agents
  std::vector<FileEvent> files;        ///< what its tool calls did to files (ctxfold files)
  std::vector<CommandEvent> commands;  ///< the shell commands it ran (ctxfold commands)
};

/// The archive's shared facts: the index entries of the sessions reported, in page order, and
/// every recorded response grouped by session.
struct ArchiveView {
  std::vector<SessionIndexEntry> sessions;
  std::map<std::string, std::vector<UsageMessage>> usage;
};

ArchiveView load_archive(Store& store, const ReportRequest& req);

/// Loads one session's view (renders it with req.render_options).
SessionView load_session(Store& store, const ReportRequest& req, const ArchiveView& archive, std::size_t index);

/// micro-units as "1.234567" (six decimals).
std::string format_micro(std::int64_t micro);

}  // namespace ctxfold::report_detail
