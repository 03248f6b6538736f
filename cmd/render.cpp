#include "context.hpp"
#include "render/render.hpp"
#include "session/snapshot.hpp"

#include <iostream>
#include <sstream>

namespace ctxfold::cli {

namespace {
struct RenderCliOptions {
  std::string format = "ctxfold";
  RenderOptions opts;
  bool body = false;
  std::optional<std::string> as_of;  ///< a seq, or "-": a snapshot JSON on stdin
};

/// --as-of SEQ | -: checked against the session (as_of.out_of_range); a piped snapshot also
/// pins its session (when --session is not given) and its HEAD (when --head is not given).
void apply_as_of(Context& ctx, const std::string& arg, RenderOptions& opts, std::string& session) {
  std::string in;
  if (arg == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    in = ss.str();
  }
  SnapshotRef ref = parse_as_of_arg(arg, in);
  if (ref.session && !ctx.session) session = ctx.db().resolve_session(ref.session);
  if (ref.head && !opts.head && ref.session.value_or(session) == session) opts.head = ref.head;
  opts.as_of = resolve_as_of(ctx.db(), session, ref.boundary_seq);
}

int run_render(Context& ctx, const RenderCliOptions& o) {
  RenderFormat format = ctx.text ? RenderFormat::text : parse_render_format(o.format);
  std::string session = ctx.resolve_session();
  RenderOptions opts = o.opts;
  if (o.as_of) apply_as_of(ctx, *o.as_of, opts, session);
  Rendered r = render_context(ctx.db(), session, opts);
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
  sub.add_option("--strategy", o->opts.strategy, "view policy: rolling | lcm | raw")->default_val("rolling");
  sub.add_option("--as-of", o->as_of, "read the state at this append boundary (a seq, or - for a snapshot on stdin)");
  o->opts.max_row_bytes = kDefaultMaxRowBytes;
  sub.add_option("--max-row-bytes", o->opts.max_row_bytes,
                 "cap each row's text at N bytes with a marker naming the row and its size (0: no cap)")
      ->default_val(kDefaultMaxRowBytes);
  sub.add_flag("--body", o->body, "print exactly the provider request body (openai or anthropic)");
  return [o](Context& ctx) { return run_render(ctx, *o); };
}

}  // namespace ctxfold::cli
