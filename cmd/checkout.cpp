#include <fmt/format.h>

#include "context.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct CheckoutOptions {
  std::string id;
};

int run_checkout(Context& ctx, const CheckoutOptions& o) {
  Store& st = ctx.db();
  auto ids = ids_from_arg(o.id);
  if (ids.size() != 1) throw Error(Exit::usage, "usage.checkout", "checkout takes exactly one node id");
  Txn txn(st.db());
  auto n = st.node(ids[0], false);
  if (!n) throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", ids[0]));
  if (ctx.session && *ctx.session != n->session)
    throw Error(Exit::bad_input, "node.other_session",
                fmt::format("node '{}' belongs to session '{}', not '{}'", n->id, n->session, *ctx.session));
  auto previous = st.head(n->session);
  if (previous != n->id) st.move_head(n->session, n->id, "checkout");
  txn.commit();
  emit({{"schema", "ctxfold.checkout/1"},
        {"session", n->session},
        {"head", n->id},
        {"previous", previous ? Json(*previous) : Json(nullptr)},
        {"moved", previous != n->id}});
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_checkout(CLI::App& sub) {
  auto o = std::make_shared<CheckoutOptions>();
  sub.add_option("id", o->id, "node id to make HEAD (or - to read it from stdin)")->required();
  return [o](Context& ctx) { return run_checkout(ctx, *o); };
}

}  // namespace ctxfold::cli
