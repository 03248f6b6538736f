#include <fmt/format.h>

#include "as_of.hpp"
#include "context.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ShowOptions {
  std::string id;
  AsOfOption as_of;
};

std::vector<std::string> children_as_of(Store& st, const std::string& id, std::int64_t as_of) {
  std::vector<std::string> out = st.children(id);
  if (as_of != kLatest)
    std::erase_if(out, [&](const std::string& c) { return st.node(c, false)->seq > as_of; });
  return out;
}

int run_show(Context& ctx, const ShowOptions& o) {
  Store& st = ctx.db();
  if (o.id == "-" && o.as_of.reads_stdin())
    throw Error(Exit::usage, "usage.as_of", "show - and --as-of - both read stdin", "give --as-of a seq (a snapshot's boundary_seq)");
  const std::int64_t as_of = o.as_of.for_database(ctx);  // as_of.out_of_range
  return for_each_id(o.id, [&](const std::string& id) {
    auto n = st.node(id);
    if (n && n->seq > as_of) n.reset();  // --as-of: appended after that boundary
    if (!n) throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", id));
    Json node = node_to_json(*n);
    node["metadata"].erase("covers");
    emit({{"schema", "ctxfold.show/1"},
          {"session", n->session},
          {"node", node},
          {"digest", n->digest},
          {"estimated_tokens", n->tokens},
          {"children", children_as_of(st, id, as_of)}});
  });
}
}  // namespace

std::function<int(Context&)> setup_show(CLI::App& sub) {
  auto o = std::make_shared<ShowOptions>();
  sub.add_option("id", o->id, "node id, or - to read ids (or ctxfold JSON records) from stdin")->required();
  o->as_of.add_to(sub, "show the node and its children as they were");
  return [o](Context& ctx) { return run_show(ctx, *o); };
}

}  // namespace ctxfold::cli
