#include "context.hpp"
#include "recall/expand.hpp"

namespace ctxfold::cli {

namespace {
struct ExpandOptions {
  std::string id;
  std::int64_t offset = 0;
  std::int64_t limit = 20000;
};

int run_expand(Context& ctx, const ExpandOptions& o) {
  return for_each_id(o.id, [&](const std::string& id) {
    emit(expand_page_record(expand(ctx.db(), id, o.offset, o.limit)));
  });
}
}  // namespace

std::function<int(Context&)> setup_expand(CLI::App& sub) {
  auto o = std::make_shared<ExpandOptions>();
  sub.add_option("id", o->id, "summary id, or - to read ids (or ctxfold JSON records) from stdin")->required();
  sub.add_option("--offset", o->offset, "first grapheme of the page (row separators \"\\n\\n\" count)");
  sub.add_option("--limit", o->limit, "page size in graphemes (default 20000)");
  return [o](Context& ctx) { return run_expand(ctx, *o); };
}

}  // namespace ctxfold::cli
