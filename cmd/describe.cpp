#include "context.hpp"
#include "recall/describe.hpp"

namespace ctxfold::cli {

namespace {
struct DescribeOptions {
  std::string id;
};

int run_describe(Context& ctx, const DescribeOptions& o) {
  for (const std::string& id : ids_from_arg(o.id)) emit(describe_node(ctx.db(), id));
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_describe(CLI::App& sub) {
  auto o = std::make_shared<DescribeOptions>();
  sub.add_option("id", o->id, "node id, or - to read ids (or ctxfold JSON records, grep matches too) from stdin")
      ->required();
  return [o](Context& ctx) { return run_describe(ctx, *o); };
}

}  // namespace ctxfold::cli
