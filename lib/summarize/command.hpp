#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "summarize/summarizer.hpp"

namespace ctxfold {

/// `command:CMD` (docs/strategies.md "Summarizers"): runs CMD with /bin/sh -c for every call,
/// writes the request JSON to its stdin and reads the summary from its stdout. The request is
///   {"schema":"ctxfold.summarize-request/1","prompt_version","prompt","previous_summary",
///    "transcript","instructions","max_output_tokens","input_tokens"}
/// where "prompt" is the embedded share/prompts/<prompt_version>.txt (the history is data, not
/// instructions). The answer is stdout with surrounding whitespace trimmed; when stdout is a JSON
/// object with a string "summary" (or "text") field, that field is the answer.
/// Failures (Error(environment, ...)): the program cannot be started or exits non-zero or by a
/// signal ("summarizer.command", stderr's first line in the message), prints nothing
/// ("summarizer.empty"), prints invalid UTF-8 or NUL bytes ("summarizer.malformed"), or runs past
/// the timeout ("summarizer.timeout": its process group is killed).
/// SIGINT, SIGTERM or SIGHUP to ctxfold while the command runs (each unless ignored on entry):
/// the command's process group gets SIGTERM, then SIGKILL after 500 ms, is reaped, and the
/// process ends as the signal would (exit 128+N, docs/commands.md "Exit codes"): summarize never
/// returns, so nothing after the call is committed.
/// The stop signals are caught, and the interruption reported, through `env`
/// (util/environment.hpp catch_stop_signals, diagnostic). Settings: CTXFOLD_SUMMARIZER_TIMEOUT_MS
/// (default 300000), CTXFOLD_SUMMARIZER_WINDOW (tokens, default 32000) — read from `env` once by
/// the constructor. `env` must outlive the summarizer.
class CommandSummarizer : public Summarizer {
 public:
  CommandSummarizer(std::string command, Environment& env);
  CommandSummarizer(std::string command, std::chrono::milliseconds timeout, std::int64_t window, Environment& env)
      : command_(std::move(command)), env_(env), timeout_(timeout), window_(window) {}

  std::string kind() const override { return "command"; }
  std::string model() const override { return command_; }
  std::int64_t window_tokens() const override { return window_; }
  SummaryResult summarize(const SummaryRequest& req) override;

 private:
  std::string command_;
  Environment& env_;
  std::chrono::milliseconds timeout_{300000};
  std::int64_t window_ = 32000;
};

/// The summarizers this library builds without a network client: "extractive" and
/// "command:CMD" (made with `env`, its texts redacted of summarizer_secrets(env, {}),
/// summarize/secrets.hpp); nullptr for any other spec (openai:, anthropic: come from
/// make_summarizer).
std::unique_ptr<Summarizer> make_local_summarizer(const std::string& spec, Environment& env);

}  // namespace ctxfold
