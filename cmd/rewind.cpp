// rewind [N | --to ID]: move HEAD back along its own spine (an explicit, recorded HEAD move).
#include <fmt/format.h>

#include "context.hpp"
#include "session/fork.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct RewindCliOptions {
  std::optional<std::int64_t> steps;
  std::optional<std::string> to;
};

int run_rewind(Context& ctx, const RewindCliOptions& o) {
  if (o.steps && o.to) throw Error(Exit::usage, "usage.rewind", "rewind takes N or --to ID, not both");
  RewindOptions opts;
  if (o.to) {
    auto ids = ids_from_arg(*o.to);
    if (ids.size() != 1) throw Error(Exit::usage, "usage.rewind", "rewind --to takes exactly one node id");
    opts.to = ids[0];
  }
  if (o.steps) opts.steps = *o.steps;
  std::string session = ctx.resolve_session();
  RewindResult r = rewind_head(ctx.db(), session, opts);
  if (ctx.text)
    emit_text(fmt::format("{}: HEAD {} -> {} ({} messages back)\n", r.session, r.previous, r.head, r.steps));
  else
    emit(rewind_to_json(r));
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_rewind(CLI::App& sub) {
  auto o = std::make_shared<RewindCliOptions>();
  sub.add_option("n", o->steps, "move HEAD back N message nodes along its spine (default 1)");
  sub.add_option("--to", o->to, "move HEAD back to this node of its spine (or - to read it from stdin)");
  return [o](Context& ctx) { return run_rewind(ctx, *o); };
}

}  // namespace ctxfold::cli
