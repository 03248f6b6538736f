// tokens: provider-measured input tokens against ctxfold's estimates, per request (issue 9).
#include <fmt/format.h>

#include "context.hpp"
#include "forensics/fidelity.hpp"
#include "render_warnings.hpp"
#include "render/figures.hpp"
#include "render/render.hpp"
#include "forensics/request_table.hpp"

namespace ctxfold::cli {

namespace {
struct TokensOptions {
  std::int64_t min_growth = 200;
  bool client_requests = false;
};

/// --client-requests: each request the client recorded against the render at its node; exit 1
/// when any differs.
int run_client_requests(Context& ctx, const std::string& session) {
  FidelityReport rep = client_request_fidelity(ctx.db(), session);
  Json j = fidelity_json(rep);
  if (!ctx.text) {
    emit(j);
  } else {
    std::string out = fmt::format("{:<38} {:>6} {:>9} {:>9} {:>6}\n", "request", "line", "messages", "compared", "equal");
    for (const auto& q : rep.requests) {
      out += fmt::format("{:<38} {:>6} {:>9} {:>9} {:>6}{}\n", q.id.substr(0, 38), q.line, q.messages, q.compared,
                         q.equal, q.head.empty() ? "  (no stored reply)" : "");
      for (const auto& d : q.differences) out += "  " + dump_json(d) + "\n";
    }
    const Json& s = j["summary"];
    out += fmt::format("{} requests, {} messages compared, {} equal, {} requests differ\n", s["requests"].get<std::int64_t>(),
                       s["compared"].get<std::int64_t>(), s["equal"].get<std::int64_t>(),
                       s["differing_requests"].get<std::int64_t>());
    emit_text(out);
  }
  return j["summary"]["differing_requests"].get<std::int64_t>() > 0 ? 1 : 0;
}

int run_tokens(Context& ctx, const TokensOptions& o) {
  std::string session = ctx.resolve_session();
  if (o.client_requests) return run_client_requests(ctx, session);
  RequestTable t = request_table(ctx.db(), session, o.min_growth);
  RenderOptions lean;
  lean.lean_metadata = true;  // the figure reads no stored source records
  // nor the content: HEAD's render as figures, a few tens of bytes an item
  const RenderedFigures figs = render_figures(ctx.db(), session, lean);
  const Rendered& now = figs.r;
  if (!ctx.text) {
    // Written a request and a pair at a time: the document is never held whole.
    write_request_table_json(t, o.min_growth, now.tokens, [](const std::string& piece) { emit_text(piece); });
    emit_text("\n");
    return print_render_warnings(now.warnings, session);
  }
  emit_text(fmt::format("{:<40} {:>9} {:>9} {:>9} {:>8}\n", "request", "measured", "estimated", "bytes/4", "error"));
  for (const auto& r : t.requests)
    emit_text(fmt::format("{:<40} {:>9} {:>9} {:>9} {:>7.1f}%\n", r.node.substr(0, 40), r.measured, r.estimated,
                          r.bytes4,
                          r.measured ? 100.0 * static_cast<double>(r.estimated - r.measured) /
                                           static_cast<double>(r.measured)
                                     : 0.0));
  const Json s = request_table_summary_json(t);
  std::string out = fmt::format("growth pairs: {} (skipped: {} small, {} resets, {} model switches)\n", t.pairs.size(),
                                t.skipped_small, t.skipped_reset, t.skipped_model_switch);
  for (const char* row : {"bytes4", "estimated", "calibrated"}) {
    if (s[row]["median"].is_null()) {
      out += fmt::format("  {:<11} median   n/a   p90   n/a (no growth pair to measure)\n", row);
      continue;
    }
    out += fmt::format("  {:<11} median {:5.1f}%  p90 {:5.1f}%\n", row, 100 * s[row]["median"].get<double>(),
                       100 * s[row]["p90"].get<double>());
  }
  out += fmt::format("now: {} tokens ({})\n", now.tokens.value, now.tokens.kind);
  emit_text(out);
  return print_render_warnings(now.warnings, session);
}
}  // namespace

std::function<int(Context&)> setup_tokens(CLI::App& sub) {
  auto o = std::make_shared<TokensOptions>();
  sub.add_option("--min-growth", o->min_growth, "skip request pairs whose measured growth is below this")
      ->default_val(200);
  sub.add_flag("--client-requests", o->client_requests,
               "compare each request the client recorded in the transcript (Claude Code api-request records) "
               "with the render at the node it was sent from; exit 1 when any differs");
  return [o](Context& ctx) { return run_tokens(ctx, *o); };
}

}  // namespace ctxfold::cli
