#include "report/session_view.hpp"

#include <fmt/format.h>

#include <limits>
#include <set>

namespace ctxfold::report_detail {

ArchiveView load_archive(Store& store, const ReportRequest& req) {
  ArchiveView a;
  std::set<std::string> taken;
  for (SessionIndexEntry& e : session_index(store)) {
    bool sub = e.info.kind == "sidechain" && e.info.parent_session && taken.count(*e.info.parent_session);
    if (req.session && e.info.id != *req.session && !sub) continue;
    taken.insert(e.info.id);
    a.sessions.push_back(std::move(e));
  }
  for (UsageMessage& m : usage_messages(store))
    if (taken.count(m.session)) a.usage[m.session].push_back(std::move(m));
  return a;
}

namespace {

std::vector<UsageRow> usage_rows(const std::vector<UsageMessage>& messages) {
  std::map<std::string, UsageRow> rows;
  for (const UsageMessage& m : messages) {
    UsageRow& r = rows[m.model];
    r.model = m.model;
    r.messages++;
    r.tokens += m.tokens;
  }
  static const PriceTable prices = builtin_price_table();
  std::vector<UsageRow> out;
  for (auto& [model, r] : rows) {
    if (const Price* p = prices.find(model)) r.cost_micro = cost_micro(r.tokens, *p);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

SessionView load_session(Store& store, const ReportRequest& req, const ArchiveView& archive, std::size_t index) {
  SessionView v;
  v.entry = archive.sessions[index];
  const std::string& id = v.entry.info.id;
  v.rendered = render_context(store, id, req.render_options ? req.render_options(id) : RenderOptions{});
  v.compactions = session_compactions(store, id);
  session_tool_events(store, id, std::numeric_limits<std::int64_t>::max(), &v.files, &v.commands);
  if (auto it = archive.usage.find(id); it != archive.usage.end()) v.usage = usage_rows(it->second);
  for (const SessionIndexEntry& e : archive.sessions)
    if (e.info.parent_session == id) {
      v.children.push_back(&e);
      if (e.info.parent_node) v.launched[*e.info.parent_node].push_back(&e);
    }
  return v;
}

std::string format_micro(std::int64_t micro) {
  return fmt::format("{}{}.{:06}", micro < 0 ? "-" : "", std::abs(micro) / 1000000, std::abs(micro) % 1000000);
}

}  // namespace ctxfold::report_detail
