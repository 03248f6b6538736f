#include <fmt/format.h>

#include "context.hpp"
#include "invariants/verify.hpp"

namespace ctxfold::cli {

namespace {
struct VerifyOptions {
  bool all_sessions = false;
};

int run_verify(Context& ctx, const VerifyOptions& o) {
  Store& st = ctx.db();
  std::vector<std::string> sessions;
  if (o.all_sessions) {
    for (const auto& s : st.sessions()) sessions.push_back(s.id);
  } else {
    sessions.push_back(ctx.resolve_session());
  }
  VerifyReport r = verify_invariants(st, sessions);
  if (ctx.text) {
    std::string out;
    for (const auto& c : r.checks) {
      out += fmt::format("{:<4} {:<40} {}\n", c.id, c.name, c.ok ? "ok" : "FAILED");
      for (const auto& v : c.violations) out += fmt::format("     violation [{}]: {}\n", v.session, v.message);
      for (const auto& w : c.warnings) out += fmt::format("     warning [{}]: {}\n", w.session, w.message);
    }
    out += fmt::format("{} session(s): {}\n", r.sessions.size(), r.ok ? "all invariants hold" : "violations found");
    emit_text(out);
  } else {
    emit(verify_to_json(r));
  }
  return r.ok ? 0 : 1;
}
}  // namespace

std::function<int(Context&)> setup_verify(CLI::App& sub) {
  auto o = std::make_shared<VerifyOptions>();
  sub.add_flag("--all-sessions", o->all_sessions, "check every session of the database");
  return [o](Context& ctx) { return run_verify(ctx, *o); };
}

}  // namespace ctxfold::cli
