#include <fmt/format.h>

#include "context.hpp"
#include "forensics/lineage.hpp"
#include "recall/grep.hpp"
#include "stream.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct GrepCliOptions {
  GrepOptions grep;
  std::string in = "both";
  bool all_sessions = false;
};

int run_grep(Context& ctx, GrepCliOptions o) {
  o.grep.in = parse_grep_in(o.in);
  if (o.grep.offset < 0) throw Error(Exit::usage, "grep.offset", "--offset must not be negative");
  if (o.all_sessions && o.grep.scope)
    throw Error(Exit::usage, "grep.scope", "--scope and --all-sessions exclude each other");
  if (!o.all_sessions && !o.grep.scope) o.grep.session = ctx.resolve_session();
  if (o.all_sessions) {
    // A fork's or resumed copy's shared prefix is found once, in its parent (docs/forensics.md).
    for (const std::string& id : shared_prefix_nodes(ctx.db()))
      if (auto n = ctx.db().node(id, false)) o.grep.skip.insert(n->seq);
  }
  GrepTotals t;
  JsonLines out;
  try {
    auto search = o.grep.in == GrepIn::thinking ? grep_thinking : grep;
    t = search(ctx.db(), o.grep, [&o, &out](const GrepMatch& m) {
      out.record("match", grep_match_record(m, o.grep.in));
    });
  } catch (const Error& e) {
    // The coverage lookup is expand's: name this command's flag in the hint.
    if (e.code() != "node.not_view") throw;
    throw Error(e.exit(), e.code(), e.what(), "grep --scope takes a summary, archive or notes id (see `ctxfold list`)");
  }
  out.summary("ctxfold.grep/2",
              {{"raw_matches", t.raw_matches},
               {"summary_matches", t.summary_matches},
               {"nodes_scanned", t.nodes_scanned},
               {"offset", o.grep.offset},
               {"limit", o.grep.limit < 0 ? Json(nullptr) : Json(o.grep.limit)},
               {"elapsed_ms", t.elapsed_ms},
               {"index", t.index},
               // null when no index answered (a scan of everything), not 0 as if one had answered nothing.
               {"indexed_through", t.index == "scan" ? Json(nullptr) : Json(t.indexed_through)},
               {"packed_through", t.packed_through}});
  if (!t.index_note.empty()) warn("grep index not used: " + t.index_note);
  return t.raw_matches + t.summary_matches > 0 ? 0 : static_cast<int>(Exit::negative);
}
}  // namespace

std::function<int(Context&)> setup_grep(CLI::App& sub) {
  auto o = std::make_shared<GrepCliOptions>();
  sub.add_option("pattern", o->grep.pattern, "text to find (literal unless --regex)")->required();
  sub.add_flag("--regex", o->grep.regex,
               "PATTERN is a regular expression in RE2 syntax (no backreferences or lookaround), matched per line");
  sub.add_flag("-i,--ignore-case", o->grep.ignore_case, "Unicode case folding (utf8proc)");
  sub.add_option("--in", o->in, "raw | summaries | both | thinking (default both; thinking: the thinking blocks of raw history, the model's reasoning, always scanned)");
  sub.add_flag("--all-sessions", o->all_sessions, "search every session");
  sub.add_option("--scope", o->grep.scope, "only the nodes this summary covers (recursively)");
  sub.add_option("--offset", o->grep.offset, "skip the first N raw and the first N summary matches");
  sub.add_option("--limit", o->grep.limit, "print at most N raw and N summary matches (counts stay totals)")
      ->check(CLI::NonNegativeNumber);
  sub.add_flag("--no-index", o->grep.no_index, "scan every node even where `ctxfold index` has indexed them");
  return [o](Context& ctx) { return run_grep(ctx, *o); };
}

}  // namespace ctxfold::cli
