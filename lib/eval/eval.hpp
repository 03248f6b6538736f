#pragma once
// `ctxfold eval` (docs/eval.md): probes answered by a model given the full history of a session,
// each strategy's compacted render, and each compacted render with ctxfold's recall pasted in;
// accuracy per probe class and per context. The session's database is only read: every
// compaction runs on an in-memory copy of the session.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/answers.hpp"
#include "eval/probes.hpp"
#include "model/node.hpp"
#include "store/store.hpp"
#include "strategies/registry.hpp"
#include "summarize/summarizer.hpp"
#include "util/environment.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// The prompt the answering model reads (share/prompts/eval-answer-v1.txt; SummaryRequest
/// prompt_version, so the `openai:`/`anthropic:` summarizers send it as their system prompt and a
/// `command:` one gets it as "prompt").
inline constexpr const char* kEvalPromptVersion = "eval-answer-v1";

/// The tokens an answer may take (SummaryRequest::max_output_tokens of every question).
inline constexpr std::int64_t kEvalAnswerTokens = 512;

/// The text a model reads of a context: each node as the summarizers read it
/// (summarize/transcript.hpp node_transcript, with no tool result or input shortened), joined by
/// a blank line; event nodes give nothing.
std::string context_text(const std::vector<Node>& items);

/// Who answers a probe given one context.
class Answerer {
 public:
  virtual ~Answerer() = default;
  /// The model of the answers' key (AnswerKey::model): "KIND:MODEL" as the summarizer names
  /// itself ("command:CMD", "openai:gpt-4o"), redacted like every summarizer text.
  virtual std::string model() const = 0;
  /// The context a question may carry, in tokens (local estimate); longer contexts are cut in the
  /// middle (fit_context).
  virtual std::int64_t window_tokens() const = 0;
  /// The answer to `probe` given `context_text` (named `context`, whose sha256 is `digest`).
  virtual std::string answer(const Probe& probe, const std::string& context, const std::string& context_text,
                             const std::string& digest) = 0;
};

/// A model through the summarizer interface (summarize/summarizer.hpp make_summarizer: `openai:`,
/// `anthropic:` and `command:` specs, their HTTP and process plumbing and their redaction): each
/// question is one SummaryRequest {transcript: the context, instructions: the question,
/// prompt_version: kEvalPromptVersion, max_output_tokens: kEvalAnswerTokens}. `record`, when
/// given, receives every answer. Throws Error(usage,"eval.model") for the extractive summarizer
/// and replay:DIR (they answer no question), and the errors of make_summarizer.
std::unique_ptr<Answerer> model_answerer(const std::string& spec, Environment& env, AnswerBook* record);

/// Answers from recorded answers only (no model, no network): `model` is the key's model, and
/// its window the largest the book records for it (contexts are cut as they were when recorded);
/// `label` names the file in errors. A question with no recorded answer throws
/// Error(bad_input,"eval.replay_missing") naming the probe, its place in the probe file, the
/// context and the context digest.
std::unique_ptr<Answerer> replay_answerer(const AnswerBook& book, std::string model, std::string label);

/// `context_text` cut to fit `window_tokens` less the prompt and the answer (a 1,024-token
/// allowance): when its local estimate is larger, the middle goes (summarize/transcript.hpp
/// shorten_middle), keeping the head (a summary) and the tail (the newest turns) in proportion.
/// `cut` tells whether anything went.
std::string fit_context(std::string context_text, std::int64_t window_tokens, bool* cut);

/// The recall a context "+recall" adds for a probe (docs/eval.md "The recall context"): for each
/// of recall_terms(probe), `ctxfold grep -i` over the session's raw rows, and for its first two
/// matches on HEAD's spine the matching row and the two rows after it (node_transcript, each cut
/// to 1,500 bytes in the middle), as a tool output block; at most 16,000 bytes in all. `spine` is
/// HEAD's raw spine (a raw render's items). Deterministic: the same rows give the same text.
std::string recall_block(Store& store, const std::string& session, const std::vector<Node>& spine, const Probe& probe);

/// How `run_eval` compacts and what it asks.
struct EvalOptions {
  std::vector<std::string> strategies = {"rolling", "lcm", "snapcompact"};  ///< compaction strategies (registry names)
  StrategyOptions strategy_options;  ///< each strategy's settings; `force` is set for every run
  bool recall = true;                ///< also ask each compacted render with recall_block
  Environment* env = nullptr;        ///< the compactions' clock (CompactionOptions::env)
};

/// Accuracy over some answers.
struct Tally {
  std::int64_t correct = 0;
  std::int64_t total = 0;
};

/// One context the probes were asked with.
struct EvalContext {
  std::string name;                     ///< "full", "STRATEGY" or "STRATEGY+recall"
  std::optional<std::string> strategy;  ///< the strategy that compacted it (none for full)
  bool recall = false;
  Json compaction;                      ///< {"status","reason","summary_id"} of its compaction; null for full
  std::int64_t tokens = 0;              ///< local estimate of the context text (without the recall block)
  std::int64_t cut_probes = 0;          ///< probes whose context was cut to the model's window
  Tally all;
  std::vector<Tally> by_class;          ///< in probe_classes() order
};

/// One probe asked with one context.
struct EvalAnswer {
  std::string probe;
  ProbeClass klass = ProbeClass::file;
  std::string context;
  bool correct = false;
  std::string answer;
};

struct EvalReport {
  std::string session;
  std::string model;
  std::string summarizer;  ///< KIND:MODEL of the summarizer the compactions used ("extractive")
  std::vector<Probe> probes;
  std::vector<EvalContext> contexts;  ///< full, then per strategy its render and its render+recall
  std::vector<EvalAnswer> answers;    ///< probe-major, in contexts order
};

/// Runs the evaluation: renders HEAD's raw spine (the full history, rows capped at
/// kDefaultMaxRowBytes as `render` caps them), then for each strategy copies the session into an
/// in-memory database, compacts it there once (forced, with `summarizer` and the strategy's
/// options) and renders it (snapcompact's archive read as text, as another strategy renders
/// it); asks every probe with every context and scores it with answer_correct. `store` is only
/// read. Throws Error(usage,"compact.strategy") for an unknown strategy before any call, and
/// the answerer's and the compactions' errors (a failed compaction is not an error: its status
/// is reported and the context is what the copy then renders).
EvalReport run_eval(Store& store, const std::string& session, const std::vector<Probe>& probes, Answerer& answerer,
                    Summarizer& summarizer, const EvalOptions& opts);

/// {"schema":"ctxfold.eval/1","session","model","summarizer","probes","classes":{CLASS: count},
///  "contexts":[{"context","strategy","recall","compaction","tokens","cut_probes","correct",
///  "total","accuracy","by_class":{CLASS:{"correct","total","accuracy"}}}],
///  "answers":[{"probe","class","context","correct","answer"}]}; accuracy is correct/total
/// rounded to 4 places, null for no probe.
Json eval_to_json(const EvalReport& r);

/// The --text table: one row per context, a column per class and the overall accuracy, as
/// "correct/total (percent)".
std::string eval_to_text(const EvalReport& r);

}  // namespace ctxfold
