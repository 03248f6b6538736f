#include "context.hpp"
#include "recall/describe.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ListOptions {
  std::int64_t offset = 0;
  std::int64_t limit = 100;
};

int run_list(Context& ctx, const ListOptions& o) {
  if (o.offset < 0) throw Error(Exit::usage, "list.offset", "--offset must not be negative");
  emit(list_views(ctx.db(), ctx.resolve_session(), o.offset, o.limit));
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_list(CLI::App& sub) {
  auto o = std::make_shared<ListOptions>();
  sub.add_option("--offset", o->offset, "skip the first N view nodes")->check(CLI::NonNegativeNumber);
  sub.add_option("--limit", o->limit, "at most N view nodes (default 100; 0 for all)")->check(CLI::NonNegativeNumber);
  return [o](Context& ctx) { return run_list(ctx, *o); };
}

}  // namespace ctxfold::cli
