#include "as_of.hpp"
#include "budget_options.hpp"
#include "context.hpp"
#include "store/recorded_model.hpp"
#include "render/partial.hpp"
#include "render_warnings.hpp"
#include "render/moved.hpp"
#include "render/render.hpp"
#include "render/view_policy.hpp"
#include "session/budget.hpp"
#include "session/prepare.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "snapcompact/frames.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct RenderCliOptions {
  std::string format = "ctxfold";
  RenderOptions opts;
  bool body = false;
  AsOfOption as_of;
  std::optional<std::string> frames_dir;
  std::optional<std::string> system_file;
  CLI::Option* strategy_opt = nullptr;
  BudgetCliOptions budget;
  std::string summarizer = "extractive";
};

/// --frames-dir: the archive's frames as DIR/frame-NNN.png (NNN: the frame's index in the archive).
void write_frames(const Rendered& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  if (!r.archive) return;
  for (const auto& n : r.items) {
    if (n.id != *r.archive) continue;
    std::size_t k = 0;
    for (const auto& b : n.content) {
      if (json_str(b, "type") != "image") continue;
      const auto& fr = r.frames["frames"][k++];
      auto png = base64_decode(json_str(b, "data"));
      if (!png) continue;
      std::string path = fmt::format("{}/frame-{:03}.png", dir, fr["index"].get<std::int64_t>());
      std::ofstream out(path, std::ios::binary);
      out.write(png->data(), static_cast<std::streamsize>(png->size()));
      if (!out) throw ctxfold::Error(ctxfold::Exit::environment, "render.frames_dir", fmt::format("cannot write '{}'", path));
    }
  }
}

int run_render(Context& ctx, const RenderCliOptions& o) {
  RenderFormat format = ctx.text ? RenderFormat::text : parse_render_format(o.format);
  std::string session = ctx.resolve_session();
  RenderOptions opts = o.opts;
  opts.lean_metadata = true;  // nothing below reads the items' stored source records
  std::optional<BudgetOptions> budget = budget_options(o.budget, opts.model);  // bad flags fail first
  // A piped snapshot also pins its session (when --session is not given) and its HEAD (when
  // --head is not given).
  if (o.as_of.given()) opts.as_of = o.as_of.for_session(ctx, session, &opts.head);
  if (o.system_file) {
    std::ifstream in(*o.system_file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof())
      throw ctxfold::Error(ctxfold::Exit::environment, "render.system_file",
                           fmt::format("cannot read the system prompt file '{}'", *o.system_file));
    opts.system_text = ss.str();
  }
  if (o.strategy_opt && o.strategy_opt->count() == 0) opts.strategy = session_strategy(ctx.db(), session, opts.as_of);
  // snapcompact without --model: the frames for the model the session's transcript names now,
  // as `compact --strategy snapcompact` draws and caches them.
  if (const ViewPolicy* v = find_view_policy(opts.strategy); v && v->frames && opts.model.empty()) opts.model = recorded_model(ctx.db(), session).value_or("");
  // openai and anthropic print from the messages alone (render/moved.hpp): the render holds its
  // content once. The budget and the frames read the items' content.
  const bool moved = (format == RenderFormat::openai || format == RenderFormat::anthropic) && !budget && !o.frames_dir;
  Rendered r = moved ? render_moved(ctx.db(), session, opts) : render_context(ctx.db(), session, opts);
  if (o.frames_dir) write_frames(r, *o.frames_dir);
  std::optional<BudgetReport> report;
  if (budget) {
    std::unique_ptr<Summarizer> summarizer = make_summarizer(o.summarizer, *ctx.env);
    BudgetCache cache;
    report = apply_budget(r, *summarizer, *budget, cache);
    fmt::print(stderr, "{}\n", budget_summary_line(*report));
  }
  // What is printed holds the render's content again: the items and messages go before it is
  // printed, so a large render is not held twice while it is written out.
  auto release = [&r] {
    std::vector<Node>().swap(r.items);
    std::vector<RenderedMessage>().swap(r.messages);
  };
  if (format == RenderFormat::text) {
    std::string text = render_to_text(r);
    release();
    emit_text(text);
  } else if (o.body) {
    Json body = render_request_body(r, format);
    release();
    emit(body);
  } else {
    Json j = render_to_json(r, format);
    if (report) j["budget"] = report->to_json();
    release();
    emit(j);
  }
  return print_render_warnings(r.warnings, session);
}
}  // namespace

int print_render_warnings(const std::vector<std::string>& warnings, const std::string& session) {
  // A walk that stopped before the root (a predecessor cycle or a missing predecessor in a
  // broken database) rendered a partial history: bad data, exit 3.
  bool partial = false;
  for (const std::string& w : warnings) {
    warn(w);
    partial = partial || is_partial_history(w);
  }
  if (!partial) return 0;
  warn(fmt::format("session '{}': the history rendered is partial; run 'ctxfold verify-invariants'", session));
  return static_cast<int>(Exit::bad_input);
}

std::function<int(Context&)> setup_render(CLI::App& sub) {
  auto o = std::make_shared<RenderCliOptions>();
  sub.add_option("--format", o->format, "ctxfold | openai | anthropic | gemini | responses | text")->default_val("ctxfold");
  sub.add_option("--head", o->opts.head, "render from this node instead of HEAD");
  sub.add_option("--system", o->system_file,
                 "FILE holding the system prompt to render first, in place of what the session records "
                 "(for a transcript that does not carry it; the JSON's system_prompt says what was known)");
  o->strategy_opt =
      sub.add_option("--strategy", o->opts.strategy,
                     "view policy: " + view_policy_names(" | ", " | ") +
                         " (default: the session's own strategy, the one its latest compact --strategy chose, else "
                         "rolling)")
          ->default_val("rolling");
  sub.add_option("--model", o->opts.model,
                 "snapcompact: the model the request is for (share/models/catalog.json; a text-only model renders rolling; "
                 "default: the model the session's transcript names last)");
  sub.add_option("--window", o->opts.window, "snapcompact: context window for the frame budget (default: the compaction's)");
  sub.add_option("--archive-percent", o->opts.archive_percent, "snapcompact: % of the window the frames may take");
  sub.add_option("--max-frames", o->opts.max_frames, "snapcompact: frame budget replacing the provider caps");
  sub.add_option("--frames-dir", o->frames_dir, "snapcompact: also write the frames as DIR/frame-NNN.png");
  o->as_of.add_to(sub, "render the state");
  o->opts.max_row_bytes = kDefaultMaxRowBytes;
  sub.add_option("--max-row-bytes", o->opts.max_row_bytes,
                 "cap each row's text at N bytes with a marker naming the row and its size (0: no cap)")
      ->default_val(kDefaultMaxRowBytes)
      ->check(CLI::NonNegativeNumber);
  sub.add_flag("--body", o->body, "print exactly the provider request body (openai, anthropic, gemini or responses)");
  add_budget_flags(sub, o->budget);
  sub.add_option("--summarizer", o->summarizer, "with --budget: extractive | openai:MODEL | anthropic:MODEL | command:CMD")
      ->default_val("extractive");
  return [o](Context& ctx) { return run_render(ctx, *o); };
}

}  // namespace ctxfold::cli
