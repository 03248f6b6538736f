// snapshot: the session's append boundary and state (docs/model.md "seq and the append boundary"), for reading it back with
// --as-of later.
#include <fmt/format.h>

#include "context.hpp"
#include "session/snapshot.hpp"

namespace ctxfold::cli {

namespace {
struct SnapshotOptions {
  std::int64_t as_of = kLatest;
};

int run_snapshot(Context& ctx, const SnapshotOptions& o) {
  std::string session = ctx.resolve_session();
  Snapshot s = take_snapshot(ctx.db(), session, o.as_of);
  if (ctx.text)
    emit_text(fmt::format("{} boundary {} head {} nodes {} active [{}] digest {}\n", s.session, s.boundary_seq,
                          s.head.value_or("-"), s.node_count, fmt::join(s.active_summaries, ", "), s.digest));
  else
    emit(snapshot_to_json(s));
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_snapshot(CLI::App& sub) {
  auto o = std::make_shared<SnapshotOptions>();
  sub.add_option("--as-of", o->as_of, "the state at this earlier append boundary (a snapshot's boundary_seq)");
  return [o](Context& ctx) { return run_snapshot(ctx, *o); };
}

}  // namespace ctxfold::cli
