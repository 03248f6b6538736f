#include <fmt/format.h>

#include "as_of.hpp"
#include "context.hpp"
#include "forensics/index.hpp"
#include "session/snapshot.hpp"
#include "stream.hpp"

namespace ctxfold::cli {

namespace {
struct SessionsCli {
  AsOfOption as_of;
  SessionFilter filter;
};

/// The --text table's note on a fork or resumed copy: what it replays from its parent
/// (docs/forensics.md "Lineage"); empty for a root or a sub-agent that replays nothing.
std::string lineage_note(const SessionLineage& l) {
  if (!l.parent || (l.relation == "subagent" && l.shared.empty() && l.parent_state == "stored")) return {};
  if (l.parent_state == "missing") return fmt::format("  [{} of {}: parent not in the archive, shared prefix unknown]", l.relation, *l.parent);
  if (l.parent_state == "loop") return fmt::format("  [{} of {}: a lineage loop; {} shared nodes]", l.relation, *l.parent, l.shared.size());
  return fmt::format("  [{}: {} nodes replayed from the parent]", l.relation, l.shared.size());
}

int run_sessions(Context& ctx, const SessionsCli& o) {
  Store& st = ctx.db();
  const std::int64_t as_of = o.as_of.for_database(ctx);  // as_of.out_of_range
  JsonLines out;
  std::string text = fmt::format("{:<56} {:<11} {:<10} {:>6} {:>3} {:<20} {:<20} {}\n", "SESSION", "AGENT", "KIND",
                                 "NODES", "CMP", "FIRST", "LAST", "TITLE");
  for (const SessionIndexEntry& e : session_index(st, o.filter)) {
    const SessionInfo& s = e.info;
    if (as_of != kLatest) {
      auto span = session_span(st, s.id);
      if (!span || span->first_seq > as_of) continue;  // not begun at that boundary
    }
    auto head = st.head(s.id, as_of);
    std::int64_t count = as_of == kLatest ? e.node_count : st.node_count(s.id, as_of);
    Json j = session_record(e, head, count);
    if (!ctx.text) {
      out.record("session", j);
      continue;
    }
    std::string name = std::string(static_cast<std::size_t>(e.depth) * 2, ' ') + (e.depth ? "└ " : "") + s.id;
    auto ts = [](const std::optional<std::string>& t) { return t ? t->substr(0, 19) : std::string("-"); };
    text += fmt::format("{:<56} {:<11} {:<10} {:>6} {:>3} {:<20} {:<20} {}{}\n", name, e.agent, s.kind, count,
                        e.compactions_imported + e.compactions_ctxfold, ts(e.first_timestamp), ts(e.last_timestamp),
                        e.title.value_or(""), lineage_note(e.lineage));
  }
  if (ctx.text) emit_text(text);
  else out.summary("ctxfold.sessions/1", {{"as_of", as_of == kLatest ? Json(nullptr) : Json(as_of)}, {"count", out.records()}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_sessions(CLI::App& sub) {
  auto o = std::make_shared<SessionsCli>();
  o->as_of.add_to(sub, "list the sessions as they were");
  sub.add_option("--since", o->filter.since,
                 "only sessions whose last record is at or after this ISO-8601 time or date (record timestamps)");
  sub.add_option("--until", o->filter.until,
                 "only sessions whose first record is at or before this ISO-8601 time or date (a date includes that day)");
  sub.add_option("--project", o->filter.project, "only sessions whose project or working directory contains this text");
  sub.add_option("--agent", o->filter.agent, "only sessions of this agent (claude-code, codex, gemini, ...)");
  return [o](Context& ctx) { return run_sessions(ctx, *o); };
}

}  // namespace ctxfold::cli
