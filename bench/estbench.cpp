// ctxfold-estbench: the time ctxfold's token estimator takes over a rendered context against the
// bytes/4 baseline on the same nodes (issue 9 target: within 1.2x). Also reports the whole
// render's time so the estimator's share of a render is visible.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <optional>

#include "render/render.hpp"
#include "store/store.hpp"
#include "tokens/estimate.hpp"
#include "session/open.hpp"

using namespace ctxfold;

int main(int argc, char** argv) {
  CLI::App app{"ctxfold-estbench: token estimator speed against bytes/4"};
  std::string db;
  std::optional<std::string> session;
  int repeat = 10;
  app.add_option("--db", db, "a ctxfold database")->required();
  app.add_option("--session", session, "session (default: ctxfold's default rule)");
  app.add_option("--repeat", repeat, "passes per estimator")->default_val(10);
  CLI11_PARSE(app, argc, argv);
  Store store = open_store(db, Store::Mode::read_only);
  const std::string s = store.resolve_session(session);
  using clock = std::chrono::steady_clock;
  RenderOptions raw;
  raw.strategy = "raw";
  auto t0 = clock::now();
  Rendered r = render_context(store, s, raw);
  const double render_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  std::size_t bytes = 0;
  for (const auto& n : r.items) bytes += dump_json(n.content).size();
  auto time_pass = [&](Estimator e, std::int64_t& sink) {
    double best = 1e300;
    for (int k = 0; k < repeat; ++k) {
      auto a = clock::now();
      std::int64_t t = 0;
      for (const auto& n : r.items) t += estimate_node(n, e).total;
      best = std::min(best, std::chrono::duration<double, std::milli>(clock::now() - a).count());
      sink = t;
    }
    return best;
  };
  std::int64_t tc = 0, tb = 0;
  // Interleave the two so machine load affects both alike.
  double b1 = time_pass(Estimator::bytes4, tb), c1 = time_pass(Estimator::content, tc);
  double b2 = time_pass(Estimator::bytes4, tb), c2 = time_pass(Estimator::content, tc);
  const double b = std::min(b1, b2), c = std::min(c1, c2);
  fmt::print("estimator speed on session {} ({} nodes, {:.1f} MB of content):\n", s, r.items.size(), bytes / 1e6);
  fmt::print("  bytes/4        {:8.2f} ms  ({} tokens)\n", b, tb);
  fmt::print("  ctxfold-est/4  {:8.2f} ms  ({} tokens)\n", c, tc);
  fmt::print("  ratio          {:8.2f}x   (target <= 1.2x of bytes/4 on a whole render: {:.2f}x, the raw render "
             "itself took {:.1f} ms)\n",
             c / b, (render_ms + c) / (render_ms + b), render_ms);
  return 0;
}
