#pragma once
// Recorded answers of `ctxfold eval` (docs/eval.md "Recorded answers"): what a model answered to
// one question given one context, kept so a run can be repeated with no model and no network.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "util/json.hpp"

namespace ctxfold {

/// Schema tag of one recorded answer line.
inline constexpr const char* kEvalAnswerSchema = "ctxfold.eval-answer/1";

/// The key of one answer: the model spec as given to --model (a `command:` line, `openai:MODEL`),
/// the sha256 hex of the context text the model read, and the question as the probe writes it.
struct AnswerKey {
  std::string model;
  std::string context_digest;
  std::string question;
  auto operator<=>(const AnswerKey&) const = default;
};

/// One recorded answer; probe and context name it for the reader (they are not part of the key).
struct RecordedAnswer {
  AnswerKey key;
  std::string probe;    ///< the probe's id
  std::string context;  ///< the context's name ("full", "rolling", "rolling+recall", ...)
  std::string answer;
  /// The answering model's window in tokens when it answered: the context it was given was cut
  /// to it (eval.hpp fit_context), so a replay cuts the same way; 0 when unknown.
  std::int64_t window_tokens = 0;
};

/// The answers of one file, looked up by key.
class AnswerBook {
 public:
  /// Reads a file written by to_jsonl: one {"schema":"ctxfold.eval-answer/1","model",
  /// "context_digest","question","probe","context","answer","window_tokens"?} object per line, blank lines
  /// skipped. Throws Error(bad_input,"eval.answers") "LABEL:LINE: ..." for a line that is not such
  /// an object. A key recorded twice keeps the last answer.
  static AnswerBook parse(std::string_view text, const std::string& label);

  /// The answer recorded for key, or nullopt.
  std::optional<std::string> find(const AnswerKey& key) const;
  /// The largest window_tokens recorded with `model`'s answers (0 when none says).
  std::int64_t window_tokens(const std::string& model) const;
  /// The models the book holds answers of, sorted.
  std::vector<std::string> models() const;
  /// Adds (or replaces) an answer.
  void add(RecordedAnswer a);
  /// Every answer as JSON Lines, in key order (the same answers give the same bytes).
  std::string to_jsonl() const;
  std::size_t size() const { return answers_.size(); }

 private:
  std::map<AnswerKey, RecordedAnswer> answers_;
};

}  // namespace ctxfold
