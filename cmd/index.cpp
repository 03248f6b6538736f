#include <fmt/format.h>

#include "context.hpp"
#include "recall/cover_spans.hpp"
#include "recall/like_index.hpp"
#include "recall/text_index.hpp"
#include "recall/text_packs.hpp"
#include "store/scan.hpp"

#include <chrono>

namespace ctxfold::cli {

namespace {
struct IndexOptions {
  bool rebuild = false;
};

/// `index` on an engine with its own trigram index (a PostgreSQL server): the text packs and
/// grep_like with the server's pg_trgm GIN index; none of SQLite's FTS5, gram and trigram tables
/// or cover spans (docs/backends.md "grep on a server"). The same record, those counts 0.
int run_like_index(Context& ctx, const IndexOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  PackReport p = update_text_packs(ctx.db(), 0, o.rebuild);
  LikeIndexReport r = update_like_index(ctx.db(), o.rebuild);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  emit({{"schema", "ctxfold.index/1"},
        {"indexed", r.indexed},
        {"through_seq", r.through_seq},
        {"text_bytes", r.text_bytes},
        {"fts", false},
        {"gram_nodes", 0},
        {"tri_nodes", 0},
        {"tri_postings", 0},
        {"packed", p.packed},
        {"packed_through", p.through_seq},
        {"cover_spans", 0},
        {"rebuilt", r.rebuilt},
        {"optimized", false},
        {"reason", fmt::format("grep's index on this server is {} over table grep_like (docs/backends.md)",
                               like_index_name(ctx.db().db()))},
        {"elapsed_ms", ms}});
  return 0;
}

int run_index(Context& ctx, const IndexOptions& o) {
  if (like_index_supported(ctx.db().db())) return run_like_index(ctx, o);
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
