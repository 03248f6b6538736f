// prepare: what a harness runs before every model request (docs/strategies.md "prepare").
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "budget_options.hpp"
#include "compact_options.hpp"
#include "context.hpp"
#include "render_warnings.hpp"
#include "session/prepare.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {

struct PrepareCliOptions {
  CompactCliOptions compact;
  std::string format = "ctxfold";
  bool body = false;
  std::optional<std::string> system_file, tools_file;
  std::int64_t max_row_bytes = kDefaultMaxRowBytes;
  BudgetCliOptions budget;
};

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(Exit::environment, "prepare.read", fmt::format("cannot read {} file '{}'", what, path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Whether this preparation may write to the database: it compacts only with a window (from a
/// flag or the config file, for any strategy) or --force, and records the request only with
/// --system or --tools. Otherwise (`prepare --budget N` alone) it only reads, so it opens the
/// database read-only and works on a file it cannot write.
bool may_write(const PrepareCliOptions& o) {
  if (o.compact.force || o.system_file || o.tools_file) return true;
  return rolling_options(o.compact).window || lcm_options(o.compact).window || snapcompact_options(o.compact).window;
}

int run_prepare(Context& ctx, const PrepareCliOptions& o) {
  RenderFormat format = ctx.text ? RenderFormat::text : parse_render_format(o.format);
  PrepareOptions p;
  p.rolling = rolling_options(o.compact);
  p.lcm = lcm_options(o.compact);
  p.snapcompact = snapcompact_options(o.compact);
  p.summarizer = o.compact.summarizer;
  p.force = o.compact.force;
  p.max_row_bytes = o.max_row_bytes;
  if (o.system_file) p.system = read_file(*o.system_file, "system prompt");
  if (o.tools_file) {
    std::string text = read_file(*o.tools_file, "tools");
    try {
      p.tools = parse_json(text);
    } catch (const nlohmann::json::exception& e) {
      throw Error(Exit::bad_input, "prepare.tools", fmt::format("tools file '{}' is not valid JSON: {}", *o.tools_file, e.what()));
    }
    if (!p.tools->is_array())
      throw Error(Exit::bad_input, "prepare.tools",
                  fmt::format("tools file '{}' must hold a JSON array of tool definitions", *o.tools_file));
  }
  p.budget = budget_options(o.budget, o.compact.model);  // a bad flag fails before anything runs
  if (p.budget) p.budget->instructions = o.compact.instructions;
  const std::string session = ctx.resolve_session();
  PrepareResult r = prepare_request(ctx.db(), session, p, *ctx.env);
  if (r.compaction) {
    const CompactResult& c = *r.compaction;
    if (c.summary_id)
      fmt::print(stderr, "ctxfold: prepare: compacted with {} (summary {}, covers {} nodes, {} -> {} tokens){}\n",
                 r.strategy, *c.summary_id, c.covers_count, c.tokens_before.value, c.tokens_after.value,
                 r.still_due ? "; still at the trigger, sent as is (one compaction per request)" : "");
    else
      fmt::print(stderr, "ctxfold: prepare: compaction {}: {}\n", c.status, c.reason);
  }
  if (r.budget) fmt::print(stderr, "{}\n", budget_summary_line(*r.budget));
  if (format == RenderFormat::text)
    emit_text(render_to_text(r.rendered));
  else if (o.body)
    emit(prepare_request_body(r, format));
  else
    emit(prepare_to_json(r, format));
  return print_render_warnings(r.rendered.warnings, session);
}

}  // namespace

Runner setup_prepare(CLI::App& sub) {
  auto o = std::make_shared<PrepareCliOptions>();
  sub.add_option("--format", o->format, "ctxfold | openai | anthropic | text")->default_val("ctxfold");
  sub.add_flag("--body", o->body, "print exactly the provider request body (openai or anthropic)");
  sub.add_option("--system", o->system_file, "the harness's current system prompt (a text file)");
  sub.add_option("--tools", o->tools_file, "the harness's current tool definitions (a JSON array file)");
  sub.add_option("--max-row-bytes", o->max_row_bytes,
                 "cap each row's text at N bytes with a marker naming the row and its size (0: no cap)")
      ->default_val(kDefaultMaxRowBytes)
      ->check(CLI::NonNegativeNumber);
  add_budget_flags(sub, o->budget);
  add_compaction_flags(sub, o->compact);
  return Runner([o](Context& ctx) { return run_prepare(ctx, *o); },
                [o] { return may_write(*o) ? Needs::read_write : Needs::read_only; });
}

}  // namespace ctxfold::cli
