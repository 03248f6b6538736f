// snapshot: the session's append boundary and state (docs/model.md "seq and the append boundary"), for reading it back with
// --as-of later.
#include <fmt/format.h>

#include "as_of.hpp"
#include "context.hpp"
#include "session/snapshot.hpp"

namespace ctxfold::cli {

namespace {
struct SnapshotOptions {
  AsOfOption as_of;
};

int run_snapshot(Context& ctx, const SnapshotOptions& o) {
  std::string session = ctx.resolve_session();
  const std::int64_t as_of = o.as_of.for_session(ctx, session);  // as_of.out_of_range
  Snapshot s = take_snapshot(ctx.db(), session, as_of);
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
  o->as_of.add_to(sub, "the session's state");
  return [o](Context& ctx) { return run_snapshot(ctx, *o); };
}

}  // namespace ctxfold::cli
