#include <fmt/format.h>

#include "context.hpp"
#include "forensics/compactions.hpp"
#include "forensics/lineage.hpp"
#include "stream.hpp"

namespace ctxfold::cli {

namespace {
struct CompactionsCli {
  std::string session;
  std::int64_t limit = -1;
};

int run_compactions(Context& ctx, const CompactionsCli& o) {
  Store& st = ctx.db();
  std::string session = o.session.empty() ? ctx.resolve_session() : st.resolve_session(o.session);
  std::string text;
  JsonLines out;
  // A compaction a fork or resumed copy replays from its parent is the parent's (docs/forensics.md).
  const auto lineage = session_lineage(st);
  const auto& shared = lineage.at(session).shared;
  std::int64_t skipped = 0;
  for (const CompactionEntry& c : session_compactions(st, session)) {
    if (shared.count(c.summary_id)) {
      ++skipped;
      continue;
    }
    Json j = compaction_record(session, c, 0, o.limit);
    const Json& dropped_count = j["dropped_count"];
    const Json& dropped = j["dropped"];
    if (!ctx.text) {
      out.record("compaction", j);
      continue;
    }
    auto fig = [](const std::optional<CompactionTokens>& f) {
      return f ? fmt::format("{} ({})", f->value, f->label) : std::string("-");
    };
    text += fmt::format("{}  {}  {} {} trigger={}  tokens {} -> {}\n", c.timestamp.value_or("-"), c.summary_id,
                        c.origin, c.strategy, c.trigger.value_or("-"), fig(c.tokens_before), fig(c.tokens_after));
    text += fmt::format("  covers {} nodes: {} .. {}; summary {} bytes of {} covered\n", c.covers_count,
                        c.covers_first, c.covers_last, c.summary_bytes, c.covered_bytes);
    for (const auto& [k, n] : c.found)
      text += fmt::format("  {:<13} {:>5} found {:>5} dropped\n", k, n, dropped_count[k].get<std::int64_t>());
    for (const auto& d : dropped)
      text += fmt::format("    - {:<13} {}  ({})\n", d["kind"].get<std::string>(), d["value"].get<std::string>(),
                          d["node"].get<std::string>());
    text += fmt::format("  files touched {:>5} found {:>5} dropped\n", c.files_found, c.dropped_files.size());
    for (const auto& d : j["files"]["dropped"]) {
      std::string acts;
      for (const auto& [a, n] : d["actions"].items()) acts += fmt::format("{}{}x{}", acts.empty() ? "" : " ", a, n.get<std::int64_t>());
      text += fmt::format("    - {:<24} {}  {}  ({})\n", acts, d["path"].get<std::string>(),
                          d["result"].get<std::string>(), d["node"].get<std::string>());
    }
    text += fmt::format("  commands run  {:>5} found {:>5} dropped\n", c.commands_found, c.dropped_commands.size());
    for (const auto& d : j["commands"]["dropped"])
      text += fmt::format("    - {:<8} exit={}  $ {}  ({})\n", d["result"].get<std::string>(),
                          d["exit_code"].is_null() ? std::string("?") : d["exit_code"].dump(),
                          d["command"].get<std::string>(), d["node"].get<std::string>());
  }
  if (ctx.text && skipped)
    text += fmt::format("({} compaction(s) in the shared prefix replayed from {} are listed with it)\n", skipped,
                        lineage.at(session).parent.value_or("the parent"));
  if (ctx.text) emit_text(text);
  else out.summary("ctxfold.compactions/1", {{"session", session}, {"count", out.records()}, {"shared_prefix", skipped}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_compactions(CLI::App& sub) {
  auto o = std::make_shared<CompactionsCli>();
  sub.add_option("session", o->session, "the session (default: --session, else the only or newest main session)");
  sub.add_option("--limit", o->limit, "list at most this many dropped identifiers, files and commands per compaction (counts stay whole)");
  return [o](Context& ctx) { return run_compactions(ctx, *o); };
}

}  // namespace ctxfold::cli
