// eval: probes answered with the full history, each strategy's compacted render and that render
// plus ctxfold's recall; accuracy per probe class and per context (docs/eval.md).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "compact_options.hpp"
#include "context.hpp"
#include "eval/eval.hpp"
#include "eval/generate.hpp"
#include "render/render.hpp"
#include "stream.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {

struct EvalCliOptions {
  std::optional<std::string> probes;  ///< --probes FILE ("-": stdin); absent: generated probes
  bool generate = false;              ///< --generate: print the generated probes and stop
  std::size_t per_class = 3;
  std::optional<std::string> model;   ///< --model SPEC
  std::optional<std::string> record;  ///< --record FILE
  std::optional<std::string> replay;  ///< --replay FILE
  std::string strategies = "rolling,lcm,snapcompact";
  bool no_recall = false;
  CompactCliOptions compact;          ///< --summarizer, --window, --tail-percent, --max-calls, --config
};

std::string read_input(const std::string& path, const char* what) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Exit::environment, "eval.read", fmt::format("cannot read the {} file '{}'", what, path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw Error(Exit::usage, "eval.strategies", "--strategies names no strategy", "use e.g. --strategies rolling,lcm");
  return out;
}

void check_flags(const EvalCliOptions& o) {
  if (o.generate) {
    if (o.probes || o.model || o.record || o.replay)
      throw Error(Exit::usage, "eval.options", "--generate prints probes: --probes, --model, --record and --replay do not apply");
    return;
  }
  if (o.model && o.replay)
    throw Error(Exit::usage, "eval.options", "--model asks a model and --replay answers from a file: give one");
  if (!o.model && !o.replay)
    throw Error(Exit::usage, "eval.options", "eval needs --model SPEC or --replay FILE",
                "e.g. --model openai:gpt-4o-mini, --model 'command:./answer.sh' or --replay answers.jsonl");
  if (o.record && !o.model) throw Error(Exit::usage, "eval.options", "--record needs --model (it keeps that model's answers)");
}

/// The model of a replay: the only one the file holds.
std::string replay_model(const AnswerBook& book, const std::string& path) {
  std::vector<std::string> models = book.models();
  if (models.size() == 1) return models.front();
  if (models.empty()) throw Error(Exit::bad_input, "eval.answers", fmt::format("'{}' holds no recorded answer", path));
  std::string list;
  for (const std::string& m : models) list += (list.empty() ? "" : ", ") + m;
  throw Error(Exit::bad_input, "eval.answers", fmt::format("'{}' holds the answers of several models: {}", path, list));
}

StrategyOptions strategy_options(const CompactCliOptions& c) {
  StrategyOptions so;
  so.rolling = rolling_options(c);
  so.lcm = lcm_options(c);
  so.snapcompact = snapcompact_options(c);
  return so;
}

/// Probes generated from the session's raw history (HEAD's whole spine).
std::vector<Probe> generated_probes(Context& ctx, const std::string& session, const EvalCliOptions& o) {
  RenderOptions ro;
  ro.strategy = "raw";
  ro.max_row_bytes = kDefaultMaxRowBytes;
  ro.lean_metadata = true;
  GenerateOptions g;
  g.per_class = o.per_class;
  return generate_probes(render_context(ctx.db(), session, ro).items, g);
}

int run_eval_cmd(Context& ctx, const EvalCliOptions& o) {
  check_flags(o);
  const std::string session = ctx.resolve_session();
  if (o.generate) {
    JsonLines out;
    for (const Probe& p : generated_probes(ctx, session, o)) out.record("probe", probe_to_json(p));
    out.summary("ctxfold.eval-probes/1", {{"session", session}, {"probes", out.records()}});
    return 0;
  }
  EvalOptions eo;
  eo.strategies = split_list(o.strategies);
  for (const std::string& s : eo.strategies) (void)strategy_named(s);  // an unknown name fails before any work
  eo.strategy_options = strategy_options(o.compact);
  eo.recall = !o.no_recall;
  eo.env = ctx.env;
  std::vector<Probe> probes;
  if (o.probes) {
    probes = parse_probes(read_input(*o.probes, "probe"), *o.probes == "-" ? std::string("stdin") : *o.probes);
  } else {
    probes = generated_probes(ctx, session, o);
    if (probes.empty())
      throw Error(Exit::bad_input, "eval.probe", fmt::format("no probe could be generated from session '{}'", session),
                  "write probes by hand and pass --probes FILE");
  }
  AnswerBook book, recorded;
  std::unique_ptr<Answerer> answerer;
  if (o.replay) {
    book = AnswerBook::parse(read_input(*o.replay, "answers"), *o.replay);
    answerer = replay_answerer(book, replay_model(book, *o.replay), *o.replay);
  } else {
    answerer = model_answerer(*o.model, *ctx.env, o.record ? &recorded : nullptr);
  }
  std::unique_ptr<Summarizer> summarizer = make_summarizer(o.compact.summarizer, *ctx.env);
  auto save = [&] {
    if (!o.record) return;
    std::ofstream out(*o.record, std::ios::binary | std::ios::trunc);
    out << recorded.to_jsonl();
    if (!out) throw Error(Exit::environment, "eval.record", fmt::format("cannot write '{}'", *o.record));
  };
  EvalReport report;
  try {
    report = run_eval(ctx.db(), session, probes, *answerer, *summarizer, eo);
  } catch (const Error&) {
    save();  // the answers a failing run got are kept
    throw;
  }
  save();
  if (ctx.text) emit_text(eval_to_text(report));
  else emit(eval_to_json(report));
  return 0;
}

}  // namespace

std::function<int(Context&)> setup_eval(CLI::App& sub) {
  auto o = std::make_shared<EvalCliOptions>();
  sub.add_option("--probes", o->probes,
                 "JSON Lines of {\"id\",\"class\",\"question\",\"expect\":[...]} (- reads stdin; default: probes "
                 "generated from the session)");
  sub.add_flag("--generate", o->generate, "print the probes generated from the session (JSON Lines) and stop");
  sub.add_option("--per-class", o->per_class, "generated probes per class at most (default 3)")->check(CLI::Range(1, 1000));
  sub.add_option("--model", o->model, "the model that answers: openai:MODEL | anthropic:MODEL | command:CMD");
  sub.add_option("--record", o->record, "write every answer to FILE (JSON Lines) for --replay");
  sub.add_option("--replay", o->replay, "answer from FILE (written by --record): no model, no network");
  sub.add_option("--strategies", o->strategies, "compaction strategies to compare, comma-separated (default rolling,lcm,snapcompact)");
  sub.add_flag("--no-recall", o->no_recall, "do not ask each compacted render again with ctxfold's recall pasted in");
  sub.add_option("--summarizer", o->compact.summarizer, "the compactions' summarizer: extractive | openai:MODEL | anthropic:MODEL | command:CMD | replay:DIR")
      ->default_val("extractive");
  sub.add_option("--window", o->compact.window, "the compactions' window in tokens (default: the session's current figure)");
  sub.add_option("--tail-percent", o->compact.tail_percent, "keep about this % of the window verbatim (default: each strategy's)");
  sub.add_option("--max-calls", o->compact.max_calls, "cap on summarizer calls per compaction")->check(CLI::Range(1, 1000000));
  sub.add_option("--config", o->compact.config, "the strategies' configuration file (as compact reads it)");
  return [o](Context& ctx) { return run_eval_cmd(ctx, *o); };
}

}  // namespace ctxfold::cli
