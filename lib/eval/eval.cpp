#include "eval/eval.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "model/strategy_label.hpp"
#include "recall/grep.hpp"
#include "render/render.hpp"
#include "session/open.hpp"
#include "session/prepare.hpp"
#include "summarize/spec.hpp"
#include "summarize/transcript.hpp"
#include "tokens/estimate.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

/// node_transcript without shortening: eval's contexts hold what the render holds.
TranscriptOptions whole() {
  TranscriptOptions t;
  t.max_tool_result_tokens = std::int64_t{1} << 40;
  t.max_tool_input_tokens = std::int64_t{1} << 40;
  return t;
}

class ModelAnswerer : public Answerer {
 public:
  ModelAnswerer(std::unique_ptr<Summarizer> s, AnswerBook* record) : s_(std::move(s)), record_(record) {}
  std::string model() const override { return s_->kind() + ":" + s_->model(); }
  std::int64_t window_tokens() const override { return s_->window_tokens(); }
  std::string answer(const Probe& probe, const std::string& context, const std::string& text,
                     const std::string& digest) override {
    SummaryRequest req;
    req.transcript = text;
    req.instructions = probe.question;
    req.prompt_version = kEvalPromptVersion;
    req.max_output_tokens = kEvalAnswerTokens;
    req.input_tokens = estimate_text_tokens(text) + estimate_text_tokens(probe.question);
    std::string a = s_->summarize(req).text;
    if (record_) record_->add({{model(), digest, probe.question}, probe.id, context, a, window_tokens()});
    return a;
  }

 private:
  std::unique_ptr<Summarizer> s_;
  AnswerBook* record_;
};

class ReplayAnswerer : public Answerer {
 public:
  ReplayAnswerer(const AnswerBook& book, std::string model, std::string label)
      : book_(book), model_(std::move(model)), label_(std::move(label)) {}
  std::string model() const override { return model_; }
  /// The recording model's window, so a context is cut as it was when recorded (another cut gives
  /// another digest); uncut when the book does not say.
  std::int64_t window_tokens() const override {
    const std::int64_t w = book_.window_tokens(model_);
    return w > 0 ? w : std::int64_t{1} << 40;
  }
  std::string answer(const Probe& probe, const std::string& context, const std::string&,
                     const std::string& digest) override {
    if (std::optional<std::string> a = book_.find({model_, digest, probe.question})) return *a;
    throw Error(Exit::bad_input, "eval.replay_missing",
                fmt::format("{} holds no answer of '{}' for probe '{}' ({}) with context {} (digest {})", label_, model_,
                            probe.id, probe.where, context, digest.substr(0, 16)),
                "record the answers again with --record FILE --model SPEC");
  }

 private:
  const AnswerBook& book_;
  std::string model_, label_;
};

/// The session copied into a new in-memory database: its row, every node in seq order (views with
/// their coverage) and its HEAD.
Store copy_session(Store& src, const std::string& session) {
  Store dst = open_store(":memory:", Store::Mode::read_write);
  std::optional<SessionInfo> info = src.session(session);
  if (!info) throw Error(Exit::bad_input, "session.unknown", fmt::format("no session '{}'", session));
  Txn txn(dst.db());
  dst.create_session(*info);
  src.for_each_node(session, [&](const Node& n) {
    Node c = n;
    c.seq = 0;
    dst.append(c);
    return true;
  });
  if (std::optional<std::string> head = src.head(session)) dst.move_head(session, *head, "import");
  txn.commit();
  return dst;
}

RenderOptions render_options(const std::string& strategy) {
  RenderOptions ro;
  ro.strategy = strategy;
  ro.max_row_bytes = kDefaultMaxRowBytes;
  ro.lean_metadata = true;
  ro.encode_frames = false;
  return ro;
}

/// One compacted context: the strategy run once, forced, on a copy; its render's text.
struct Compacted {
  Json compaction;
  std::string text;
};

Compacted compact_copy(Store& src, const std::string& session, const StrategyInfo& info, Summarizer& summarizer,
                       const EvalOptions& opts) {
  Store copy = copy_session(src, session);
  StrategyOptions so = opts.strategy_options;
  CompactionOptions& shared = info.shared(so);
  shared.force = true;
  shared.env = opts.env;
  CompactResult r = compact_session(copy, session, std::string(info.name), summarizer, so);
  Compacted c;
  c.compaction = {{"status", r.status},
                  {"reason", r.reason},
                  {"summary_id", r.summary_id ? Json(*r.summary_id) : Json()}};
  // snapcompact's archive is read as text, as every other strategy renders it (a text model reads
  // no frames); the other strategies render as themselves.
  const std::string render_as =
      info.label == StrategyLabel::snapcompact ? std::string(label_name(StrategyLabel::rolling)) : std::string(info.name);
  c.text = context_text(render_context(copy, session, render_options(render_as)).items);
  return c;
}

double rounded(const Tally& t) { return std::round(10000.0 * static_cast<double>(t.correct) / static_cast<double>(t.total)) / 10000.0; }

Json tally_json(const Tally& t) {
  return {{"correct", t.correct}, {"total", t.total}, {"accuracy", t.total ? Json(rounded(t)) : Json()}};
}

std::size_t class_index(ProbeClass c) {
  const auto& all = probe_classes();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] == c) return i;
  return 0;
}

EvalContext new_context(std::string name, std::optional<std::string> strategy, bool recall) {
  EvalContext c;
  c.name = std::move(name);
  c.strategy = std::move(strategy);
  c.recall = recall;
  c.by_class.resize(probe_classes().size());
  return c;
}

/// Asks one probe with one context and scores it into `ctx` and `report`.
void ask(Answerer& answerer, const Probe& p, EvalContext& ctx, std::string text, EvalReport& report) {
  bool cut = false;
  text = fit_context(std::move(text), answerer.window_tokens(), &cut);
  if (cut) ++ctx.cut_probes;
  const std::string digest = sha256_hex(text);
  EvalAnswer a;
  a.probe = p.id;
  a.klass = p.klass;
  a.context = ctx.name;
  a.answer = answerer.answer(p, ctx.name, text, digest);
  a.correct = answer_correct(a.answer, p.expect);
  for (Tally* t : {&ctx.all, &ctx.by_class[class_index(p.klass)]}) {
    ++t->total;
    if (a.correct) ++t->correct;
  }
  report.answers.push_back(std::move(a));
}

}  // namespace

std::string context_text(const std::vector<Node>& items) {
  std::string out;
  const TranscriptOptions t = whole();
  for (const Node& n : items) {
    std::string s = node_transcript(n, t);
    if (s.empty()) continue;
    if (!out.empty()) out += "\n\n";
    out += s;
  }
  return out;
}

std::unique_ptr<Answerer> model_answerer(const std::string& spec, Environment& env, AnswerBook* record) {
  SummarizerSpec s = parse_summarizer_spec(spec);
  if (s.kind == "extractive" || s.kind == "replay")
    throw Error(Exit::usage, "eval.model", fmt::format("'{}' answers no question", spec),
                "use --model openai:MODEL, anthropic:MODEL or command:CMD, or --replay FILE for recorded answers");
  return std::make_unique<ModelAnswerer>(make_summarizer(spec, env), record);
}

std::unique_ptr<Answerer> replay_answerer(const AnswerBook& book, std::string model, std::string label) {
  return std::make_unique<ReplayAnswerer>(book, std::move(model), std::move(label));
}

std::string fit_context(std::string text, std::int64_t window_tokens, bool* cut) {
  if (cut) *cut = false;
  const std::int64_t budget = std::max<std::int64_t>(256, window_tokens - 1024);
  const std::int64_t est = estimate_text_tokens(text);
  if (est <= budget) return text;
  if (cut) *cut = true;
  const auto keep = static_cast<std::size_t>(static_cast<double>(text.size()) * static_cast<double>(budget) /
                                             static_cast<double>(est) * 0.95);
  return shorten_middle(text, keep);
}

std::string recall_block(Store& store, const std::string& session, const std::vector<Node>& spine, const Probe& probe) {
  constexpr std::size_t kRowBytes = 1500, kBlockBytes = 16000;
  std::map<std::string, std::size_t> at;  // id -> index on the spine
  for (std::size_t i = 0; i < spine.size(); ++i) at.emplace(spine[i].id, i);
  const TranscriptOptions t = whole();
  std::string out = "[ctxfold recall: the output of `ctxfold grep` for this question's terms over the session's whole history]";
  for (const std::string& term : recall_terms(probe)) {
    GrepOptions g;
    g.pattern = term;
    g.ignore_case = true;
    g.in = GrepIn::raw;
    g.session = session;
    std::vector<std::size_t> hits;
    std::int64_t matches = 0;
    grep(store, g, [&](const GrepMatch& m) {
      ++matches;
      auto it = at.find(m.id);
      if (it != at.end() && hits.size() < 2) hits.push_back(it->second);
    });
    std::string part = fmt::format("\n\n$ ctxfold grep -i '{}'\n{} matching row(s)", term, matches);
    for (std::size_t h : hits) {
      part += fmt::format("\n--- row {} and the rows after it ---", spine[h].id);
      for (std::size_t k = h; k < spine.size() && k < h + 3; ++k) {
        std::string row = node_transcript(spine[k], t);
        if (!row.empty()) part += "\n" + shorten_middle(row, kRowBytes);
      }
    }
    if (out.size() + part.size() > kBlockBytes) part.resize(utf8_safe_prefix(part, kBlockBytes - std::min(kBlockBytes, out.size())));
    out += part;
    if (out.size() >= kBlockBytes) break;
  }
  return out;
}

EvalReport run_eval(Store& store, const std::string& session, const std::vector<Probe>& probes, Answerer& answerer,
                    Summarizer& summarizer, const EvalOptions& opts) {
  std::vector<const StrategyInfo*> strategies;
  for (const std::string& s : opts.strategies) strategies.push_back(&strategy_named(s));  // unknown: usage, before any call
  EvalReport report;
  report.session = session;
  report.model = answerer.model();
  report.summarizer = summarizer.kind() == "extractive" ? "extractive" : summarizer.kind() + ":" + summarizer.model();
  report.probes = probes;
  const std::vector<Node> spine = render_context(store, session, render_options("raw")).items;
  std::vector<std::string> texts = {context_text(spine)};
  report.contexts.push_back(new_context("full", std::nullopt, false));
  for (const StrategyInfo* info : strategies) {
    Compacted c = compact_copy(store, session, *info, summarizer, opts);
    for (bool recall : {false, true}) {
      if (recall && !opts.recall) continue;
      EvalContext ctx = new_context(std::string(info->name) + (recall ? "+recall" : ""), std::string(info->name), recall);
      ctx.compaction = c.compaction;
      report.contexts.push_back(std::move(ctx));
      texts.push_back(c.text);
    }
  }
  for (std::size_t i = 0; i < report.contexts.size(); ++i) report.contexts[i].tokens = estimate_text_tokens(texts[i]);
  for (const Probe& p : probes) {
    std::optional<std::string> recall;
    for (std::size_t i = 0; i < report.contexts.size(); ++i) {
      EvalContext& ctx = report.contexts[i];
      if (!ctx.recall) {
        ask(answerer, p, ctx, texts[i], report);
        continue;
      }
      if (!recall) recall = recall_block(store, session, spine, p);
      ask(answerer, p, ctx, texts[i] + "\n\n" + *recall, report);
    }
  }
  return report;
}

Json eval_to_json(const EvalReport& r) {
  Json classes = Json::object();
  for (ProbeClass c : probe_classes()) classes[probe_class_name(c)] = 0;
  for (const Probe& p : r.probes) classes[probe_class_name(p.klass)] = classes[probe_class_name(p.klass)].get<int>() + 1;
  Json contexts = Json::array();
  for (const EvalContext& c : r.contexts) {
    Json by = Json::object();
    for (std::size_t i = 0; i < probe_classes().size(); ++i) by[probe_class_name(probe_classes()[i])] = tally_json(c.by_class[i]);
    Json j = tally_json(c.all);
    j["context"] = c.name;
    j["strategy"] = c.strategy ? Json(*c.strategy) : Json();
    j["recall"] = c.recall;
    j["compaction"] = c.compaction;
    j["tokens"] = c.tokens;
    j["cut_probes"] = c.cut_probes;
    j["by_class"] = std::move(by);
    contexts.push_back(std::move(j));
  }
  Json answers = Json::array();
  for (const EvalAnswer& a : r.answers)
    answers.push_back({{"probe", a.probe}, {"class", probe_class_name(a.klass)}, {"context", a.context},
                       {"correct", a.correct}, {"answer", a.answer}});
  return {{"schema", "ctxfold.eval/1"},
          {"session", r.session},
          {"model", r.model},
          {"summarizer", r.summarizer},
          {"probes", r.probes.size()},
          {"classes", std::move(classes)},
          {"contexts", std::move(contexts)},
          {"answers", std::move(answers)}};
}

std::string eval_to_text(const EvalReport& r) {
  auto cell = [](const Tally& t) {
    return t.total ? fmt::format("{}/{} ({:.0f}%)", t.correct, t.total, 100.0 * static_cast<double>(t.correct) / static_cast<double>(t.total))
                   : std::string("-");
  };
  std::string out = fmt::format("session {}  model {}  summarizer {}  {} probe(s)\n\n", r.session, r.model, r.summarizer,
                                r.probes.size());
  out += fmt::format("{:<20} {:>8}", "context", "tokens");
  for (ProbeClass c : probe_classes()) out += fmt::format(" {:>14}", probe_class_name(c));
  out += fmt::format(" {:>14}\n", "all");
  for (const EvalContext& c : r.contexts) {
    out += fmt::format("{:<20} {:>8}", c.name, c.tokens);
    for (const Tally& t : c.by_class) out += fmt::format(" {:>14}", cell(t));
    out += fmt::format(" {:>14}\n", cell(c.all));
  }
  return out;
}

}  // namespace ctxfold
