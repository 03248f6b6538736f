#include "context.hpp"
#include "recall/cover_spans.hpp"
#include "recall/text_index.hpp"
#include "recall/text_packs.hpp"

#include <chrono>

namespace ctxfold::cli {

namespace {
struct IndexOptions {
  bool rebuild = false;
};

int run_index(Context& ctx, const IndexOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  PackReport p = update_text_packs(ctx.db(), 0, o.rebuild);  // backfills a database from before schema 4
  IndexReport r = update_text_index(ctx.db(), o.rebuild);
  CoverSpanReport c = update_cover_spans(ctx.db(), r.rebuilt);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  emit({{"schema", "ctxfold.index/1"},
        {"indexed", r.indexed},
        {"through_seq", r.through_seq},
        {"text_bytes", r.text_bytes},
        {"fts", r.fts},
        {"gram_nodes", r.gram_nodes},
        {"tri_nodes", r.tri_nodes},
        {"tri_postings", r.tri_postings},
        {"packed", p.packed},
        {"packed_through", p.through_seq},
        {"cover_spans", c.views},
        {"rebuilt", r.rebuilt},
        {"optimized", r.optimized},
        {"reason", r.reason.empty() ? Json(nullptr) : Json(r.reason)},
        {"elapsed_ms", ms}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_index(CLI::App& sub) {
  auto o = std::make_shared<IndexOptions>();
  sub.add_flag("--rebuild", o->rebuild, "clear the derived text data and index every node again");
  return [o](Context& ctx) { return run_index(ctx, *o); };
}

}  // namespace ctxfold::cli
