#include <fmt/format.h>

#include "context.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ShowOptions {
  std::string id;
};

int run_show(Context& ctx, const ShowOptions& o) {
  Store& st = ctx.db();
  int rc = 0;
  for (const std::string& id : ids_from_arg(o.id)) {
    auto n = st.node(id);
    if (!n) {
      fmt::print(stderr, "ctxfold: error: no node '{}'\n", id);
      rc = static_cast<int>(Exit::bad_input);
      continue;
    }
    Json node = node_to_json(*n);
    node["metadata"].erase("covers");
    emit({{"schema", "ctxfold.show/1"},
          {"session", n->session},
          {"node", node},
          {"digest", n->digest},
          {"estimated_tokens", n->tokens},
          {"children", st.children(id)}});
  }
  return rc;
}
}  // namespace

std::function<int(Context&)> setup_show(CLI::App& sub) {
  auto o = std::make_shared<ShowOptions>();
  sub.add_option("id", o->id, "node id, or - to read ids (or ctxfold JSON records) from stdin")->required();
  return [o](Context& ctx) { return run_show(ctx, *o); };
}

}  // namespace ctxfold::cli
