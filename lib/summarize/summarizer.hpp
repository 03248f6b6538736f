#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "summarize/transcript.hpp"
#include "util/environment.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// What a summarizer is asked (docs/strategies.md "Summarizers"). A summarizer is a pure request ->
/// text function that knows no database. `transcript` is the evicted history already rendered as
/// plain text (assistant turns as their text and tool calls, tool results as text, images as a
/// placeholder notice, encrypted reasoning skipped); it never exceeds the summarizer's own window
/// (the caller chunks).
struct SummaryRequest {
  std::string previous_summary;       ///< the summary being merged (empty on a first compaction)
  std::string transcript;             ///< the newly evicted history, as text
  std::string instructions;           ///< --instructions TEXT (focus), may be empty
  std::int64_t max_output_tokens = 4096;
  std::int64_t input_tokens = 0;      ///< local estimate of transcript + previous_summary
  std::string prompt_version;         ///< share/prompts version used to build the messages
};

/// The answer of one call.
struct SummaryResult {
  std::string text;
  std::string model;                  ///< the model that answered ("extractive" for the built-in)
  Json usage = Json::object();        ///< provider-reported usage when given
};

/// Why a call failed: the message never contains an API key.
struct SummarizerFailure {
  std::string code;     ///< "summarizer.http", "summarizer.timeout", "summarizer.context_length",
                        ///< "summarizer.auth", "summarizer.malformed", "summarizer.empty", "summarizer.command"
  std::string message;
  bool retryable = false;
};

/// A configured summarizer. summarize() throws Error(environment, failure.code, ...) on failure.
class Summarizer {
 public:
  virtual ~Summarizer() = default;
  /// "extractive" | "openai" | "anthropic" | "command"
  virtual std::string kind() const = 0;
  /// The model name (or command line for command:, "extractive" for the built-in).
  virtual std::string model() const = 0;
  /// The summarizer's own input window in tokens (local estimate); inputs are chunked to at most
  /// half of it.
  virtual std::int64_t window_tokens() const = 0;
  /// How the caller renders evicted nodes into `transcript` for this summarizer (tool results
  /// and inputs shortened for a model's window by default).
  virtual TranscriptOptions transcript_options() const { return {}; }
  virtual SummaryResult summarize(const SummaryRequest& req) = 0;
};

/// Parses a --summarizer spec: "extractive", "openai:MODEL", "anthropic:MODEL", "command:CMD".
/// Endpoints and keys come from the environment (OPENAI_BASE_URL/OPENAI_API_KEY,
/// ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY) and the summarizer command's timeouts and stop signals
/// from `env` (util/environment.hpp). Every summarizer but the extractive one comes wrapped in
/// redacting_summarizer (summarize/secrets.hpp): its API key and the values of the secret-looking
/// variables of `env` never leave it in a summary, a model name or an error. Throws Error(usage)
/// for an unknown spec.
std::unique_ptr<Summarizer> make_summarizer(const std::string& spec, Environment& env);

}  // namespace ctxfold
