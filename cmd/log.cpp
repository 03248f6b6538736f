#include <fmt/format.h>

#include <unordered_set>

#include "as_of.hpp"
#include "context.hpp"
#include "model/preview.hpp"
#include "render/graph.hpp"
#include "stream.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct LogOptions {
  std::optional<std::string> head;
  std::int64_t limit = 0;
  AsOfOption as_of;
  bool graph = false;
  std::string format = "json";
};

int run_log(Context& ctx, const LogOptions& o) {
  Store& st = ctx.db();
  std::string session = ctx.resolve_session();
  std::optional<std::string> head = o.head;
  const std::int64_t as_of = o.as_of.for_session(ctx, session, &head);  // as_of.out_of_range
  if (o.format != "json" && o.format != "dot")
    throw Error(Exit::usage, "usage.log", fmt::format("unknown log format '{}' (json | dot)", o.format));
  if (o.format == "dot" && !o.graph)
    throw Error(Exit::usage, "usage.log", "--format dot draws the whole DAG: add --graph");
  if (o.graph) {
    if (o.format != "dot")
      throw Error(Exit::usage, "usage.log", "--graph writes Graphviz: add --format dot");
    GraphStats g;
    emit_text(session_dot(st, session, as_of, &g));
    fmt::print(stderr, "ctxfold: session {}: {} raw nodes, {} capsule(s) folding {} nodes, {} inert view nodes, {} tips\n",
                 session, g.raw_nodes, g.capsules, g.folded, g.relics, g.tips);
    return 0;
  }
  std::optional<std::string> start = head ? head : st.head(session, as_of);
  if (!start) throw Error(Exit::bad_input, "session.no_head", fmt::format("session '{}' has no HEAD", session));
  std::int64_t count = 0;
  JsonLines out;
  // A broken database (edited directly: invariant 2) can hold a predecessor cycle or a missing
  // predecessor: the walk prints each node once, stops there, says so and exits 3 (bad data),
  // as render does for the same database.
  std::unordered_set<std::int64_t> seen;  // seqs: 8 bytes a node on a 10^6-node spine
  bool broken = false;
  std::optional<std::string> cur = start;
  while (cur && (o.limit <= 0 || count < o.limit)) {
    auto n = st.node(*cur, false);
    if (!n) {
      warn(fmt::format("node '{}' is missing; the spine stops here", *cur));
      broken = true;
      break;
    }
    if (!seen.insert(n->seq).second) {
      warn(fmt::format("predecessor cycle at node '{}': the spine stops there after {} nodes", *cur, count));
      broken = true;
      break;
    }
    if (ctx.text) {
      emit_text(fmt::format("{} {:>7} {:<9} {:<9} {}\n", n->id, n->seq, n->kind, n->role.empty() ? "-" : n->role,
                            node_preview(*n, 100)));
    } else {
      out.record("node", {{"id", n->id},
                          {"seq", n->seq},
                          {"kind", n->kind},
                          {"role", n->role.empty() ? Json(nullptr) : Json(n->role)},
                          {"predecessor", n->predecessor ? Json(*n->predecessor) : Json(nullptr)},
                          {"estimated_tokens", n->tokens},
                          {"preview", node_preview(*n, 100)}});
    }
    ++count;
    cur = n->predecessor;
  }
  if (!ctx.text) out.summary("ctxfold.log/1", {{"session", session}, {"head", *start}, {"count", count}});
  if (broken) {
    warn(fmt::format("session '{}': the spine printed is partial; run 'ctxfold verify-invariants'", session));
    return static_cast<int>(Exit::bad_input);
  }
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_log(CLI::App& sub) {
  auto o = std::make_shared<LogOptions>();
  sub.add_option("--head", o->head, "start from this node instead of HEAD");
  sub.add_option("--limit", o->limit, "print at most N nodes");
  o->as_of.add_to(sub, "read HEAD's spine as it was");
  sub.add_flag("--graph", o->graph, "the whole session DAG instead of HEAD's spine (with --format dot)");
  sub.add_option("--format", o->format, "json | dot (Graphviz; with --graph)")->default_val("json");
  return [o](Context& ctx) { return run_log(ctx, *o); };
}

}  // namespace ctxfold::cli
