#include "context.hpp"
#include "render/render.hpp"

namespace ctxfold::cli {

namespace {
struct RenderCliOptions {
  std::string format = "ctxfold";
  RenderOptions opts;
  bool body = false;
};

int run_render(Context& ctx, const RenderCliOptions& o) {
  RenderFormat format = ctx.text ? RenderFormat::text : parse_render_format(o.format);
  std::string session = ctx.resolve_session();
  Rendered r = render_context(ctx.db(), session, o.opts);
  if (format == RenderFormat::text)
    emit_text(render_to_text(r));
  else if (o.body)
    emit(render_request_body(r, format));
  else
    emit(render_to_json(r, format));
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_render(CLI::App& sub) {
  auto o = std::make_shared<RenderCliOptions>();
  sub.add_option("--format", o->format, "ctxfold | openai | anthropic | text")->default_val("ctxfold");
  sub.add_option("--head", o->opts.head, "render from this node instead of HEAD");
  sub.add_option("--strategy", o->opts.strategy, "view policy (rolling)")->default_val("rolling");
  sub.add_option("--as-of", o->opts.as_of, "read the state at this append boundary");
  sub.add_flag("--body", o->body, "print exactly the provider request body (openai or anthropic)");
  return [o](Context& ctx) { return run_render(ctx, *o); };
}

}  // namespace ctxfold::cli
