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
    ExpandPage p = expand(ctx.db(), id, o.offset, o.limit);
    Json rows = Json::array();
    for (const ExpandRow& r : p.rows)
      rows.push_back({{"id", r.id}, {"seq", r.seq}, {"role", r.role.empty() ? Json(nullptr) : Json(r.role)}, {"text", r.text}});
    emit({{"schema", "ctxfold.expand/1"},
          {"id", p.id},
          {"covers",
           {{"first", p.first.empty() ? Json(nullptr) : Json(p.first)},
            {"last", p.last.empty() ? Json(nullptr) : Json(p.last)},
            {"count", p.count}}},
          {"offset", p.offset},
          {"limit", p.limit},
          {"next_offset", p.next_offset ? Json(*p.next_offset) : Json(nullptr)},
          {"rows", rows}});
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
