// `context`: the inspector: the prepared request's sections in order,
// their sources, token estimates per section against the window, the compaction status, and the
// provider-measured input tokens where a transcript recorded them, always labelled.
#include <fmt/format.h>

#include "catalog/models.hpp"
#include "context.hpp"
#include "store/recorded_model.hpp"
#include "render_warnings.hpp"
#include "render/moved.hpp"
#include "render/render.hpp"
#include "render/view_policy.hpp"
#include "session/prepare.hpp"
#include "strategies/compaction.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ContextCliOptions {
  RenderOptions opts;
  std::optional<std::int64_t> window;
  int trigger_percent = 80;
  CLI::Option* strategy_opt = nullptr;
};

Json pct(std::int64_t part, const std::optional<std::int64_t>& window) {
  if (!window || *window <= 0) return nullptr;
  return static_cast<double>(static_cast<std::int64_t>(1000.0 * static_cast<double>(part) / static_cast<double>(*window) + 0.5)) / 10.0;
}

std::string bar(std::int64_t part, std::int64_t whole, int width) {
  if (whole <= 0) return {};
  std::int64_t cells = (part * width * 8 + whole / 2) / whole;  // eighths of a cell
  if (part > 0 && cells == 0) cells = 1;
  static const char* partial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  std::string s;
  for (std::int64_t i = 0; i < cells / 8 && i < width; ++i) s += "█";
  if (cells / 8 < width) s += partial[cells % 8];
  return s;
}

int run_context(Context& ctx, const ContextCliOptions& o) {
  Store& st = ctx.db();
  std::string session = ctx.resolve_session();
  if (o.window && *o.window <= 0) throw Error(Exit::usage, "usage.context", "--window must be positive");
  if (o.trigger_percent < 1 || o.trigger_percent > 100)
    throw Error(Exit::usage, "usage.context", "--trigger-percent must be 1..100");
  RenderOptions ro = o.opts;
  ro.lean_metadata = true;  // the sections and figures read no stored source records
  // The same default as render and prepare (session/prepare.hpp session_strategy).
  if (o.strategy_opt && o.strategy_opt->count() == 0) ro.strategy = session_strategy(st, session);
  // Only the sections, figures and counts are read: the render holds its content once (render/moved.hpp).
  Rendered r = render_moved(st, session, ro);
  // Without --window: the window of the model the session's transcript names last, from the
  // model catalog (docs/models.md); a model the catalog does not know is said to be so.
  const ModelInfo model = lookup_model(recorded_model(st, session).value_or(""));
  std::optional<std::int64_t> window = o.window;
  std::string window_source = o.window ? "flag" : "";
  if (!window && model.context_window) {
    window = model.context_window;
    window_source = "catalog";
  }
  Json model_json = {{"id", model.id.empty() ? Json(nullptr) : Json(model.id)},
                     {"known", model.known},
                     {"entry", model.known ? Json(model.entry) : Json(nullptr)},
                     {"context_window", model.context_window ? Json(*model.context_window) : Json(nullptr)},
                     {"catalog_as_of", catalog_as_of()}};
  if (!model.known) model_json["note"] = unknown_model_note(model);

  Json sections = Json::array();
  for (const Section& s : r.sections) {
    sections.push_back({{"kind", s.kind},
                        {"count", s.ids.size()},
                        {"first", s.ids.empty() ? Json(nullptr) : Json(s.ids.front())},
                        {"last", s.ids.empty() ? Json(nullptr) : Json(s.ids.back())},
                        {"estimated_tokens", s.estimated_tokens},
                        {"percent_of_window", pct(s.estimated_tokens, window)}});
  }
  Json status;
  const TokenFigure& fig = r.tokens;
  if (!window) {
    status = {{"window", nullptr},
              {"window_source", nullptr},
              {"due", nullptr},
              {"reason", model.known || model.id.empty()
                             ? std::string("unknown window: give --window to see the trigger")
                             : unknown_model_note(model) + ": give --window to see the trigger"}};
  } else {
    // The same decision compact makes (strategies/compaction.hpp check_trigger).
    TriggerCheck t = check_trigger(window, o.trigger_percent, fig, r.estimated_tokens, r.strategy);
    status = {{"window", *window},
              {"window_source", window_source},
              {"trigger_percent", o.trigger_percent},
              {"trigger_tokens", t.trigger},
              {"due", t.due},
              {"percent_of_window", pct(fig.value, window)},
              {"reason", t.due ? fmt::format("{} {} tokens reach the trigger of {} tokens", fig.kind, fig.value, t.trigger)
                               : t.reason}};
  }
  Json out = {{"schema", "ctxfold.context/1"},
              {"session", r.session},
              {"head", r.head},
              {"strategy", r.strategy},
              {"model", model_json},
              {"sections", sections},
              {"estimated_input_tokens", r.estimated_tokens},
              {"provider_input_tokens", fig.kind == "measured" ? Json(fig.value) : Json(nullptr)},
              {"tokens", fig.to_json()},
              {"summary", r.summary ? Json(*r.summary) : Json(nullptr)},
              {"folds", r.folds.size()},
              {"repairs", r.repairs.size()},
              {"compaction", status}};
  if (!ctx.text) {
    emit(out);
    return print_render_warnings(r.warnings, session);
  }
  std::int64_t whole = window ? *window : std::max<std::int64_t>(r.estimated_tokens, 1);
  std::string t = fmt::format("session {}  HEAD {}  strategy {}\n", r.session, r.head, r.strategy);
  for (const Section& s : r.sections) {
    std::string src = s.ids.empty() ? "" : s.ids.size() == 1 ? s.ids.front()
                                                             : fmt::format("{} .. {}", s.ids.front(), s.ids.back());
    t += fmt::format("  {:<8} {:>6} rows {:>8} est  {:<30} {}\n", s.kind, s.ids.size(), s.estimated_tokens,
                     bar(s.estimated_tokens, whole, 30), src);
  }
  t += fmt::format("  total    {:>8} tokens ({}{})", fig.value, fig.kind,
                   fig.kind == "estimated" ? "" : fmt::format("; local estimate {}", r.estimated_tokens));
  if (window)
    t += fmt::format(" of a {} window{}: {}% — {}\n", *window,
                     window_source == "catalog" ? fmt::format(" ({} in the model catalog)", model.id) : "",
                     pct(fig.value, window).dump(), status["due"].get<bool>() ? "compaction due" : "not due");
  else if (!model.known && !model.id.empty())
    t += "; " + unknown_model_note(model) + " (--window)\n";
  else
    t += "; unknown window (--window)\n";
  emit_text(t);
  return print_render_warnings(r.warnings, session);
}
}  // namespace

std::function<int(Context&)> setup_context(CLI::App& sub) {
  auto o = std::make_shared<ContextCliOptions>();
  o->strategy_opt = sub.add_option("--strategy", o->opts.strategy,
                                   "view policy: " + view_policy_names(" | ", " | ") +
                                       " (default: the session's own strategy, the one its latest compact "
                                       "--strategy chose, else rolling)")
                        ->default_val("rolling");
  sub.add_option("--head", o->opts.head, "inspect the request from this node instead of HEAD");
  sub.add_option("--window", o->window, "model context window in tokens (percentages and the trigger; default: the catalog window of the "
                 "model the session's transcript names last)");
  sub.add_option("--trigger-percent", o->trigger_percent, "compaction is due at this % of the window")->default_val(80);
  o->opts.max_row_bytes = kDefaultMaxRowBytes;
  return [o](Context& ctx) { return run_context(ctx, *o); };
}

}  // namespace ctxfold::cli
