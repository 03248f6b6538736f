// fork --at ID: a new session holding the path root→ID (docs/strategies.md "What a fork
// copies"). No model call; the source session is not touched.
#include <fmt/format.h>

#include "context.hpp"
#include "session/fork.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ForkCliOptions {
  std::string at;
  std::optional<std::string> name;
};

int run_fork(Context& ctx, const ForkCliOptions& o) {
  auto ids = ids_from_arg(o.at);
  if (ids.size() != 1) throw Error(Exit::usage, "usage.fork", "fork --at takes exactly one node id");
  ForkOptions opts;
  opts.at = ids[0];
  opts.session = ctx.session;
  opts.name = o.name;
  ForkResult r = fork_session(ctx.db(), opts);
  if (ctx.text)
    emit_text(fmt::format("forked '{}' at '{}' into '{}' (HEAD {}): {} nodes, {} summaries copied, {} omitted\n",
                          r.source_session, r.at, r.session, r.head, r.copied_nodes, r.copied_summaries.size(),
                          r.omitted_summaries.size()));
  else
    emit(fork_to_json(r));
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_fork(CLI::App& sub) {
  auto o = std::make_shared<ForkCliOptions>();
  sub.add_option("--at", o->at, "the node the fork ends at (its HEAD), or - to read it from stdin")->required();
  sub.add_option("--name", o->name, "id of the new session (default: fork-<hash>)");
  return [o](Context& ctx) { return run_fork(ctx, *o); };
}

}  // namespace ctxfold::cli
