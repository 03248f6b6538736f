#include "eval/answers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "eval/probes.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {

[[noreturn]] void bad_answer(const std::string& where, const std::string& what) {
  throw Error(Exit::bad_input, "eval.answers", fmt::format("{}: {}", where, what),
              "the file --replay reads is one written by `ctxfold eval --record`");
}

std::string field(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) bad_answer(where, fmt::format("\"{}\" must be a string", key));
  return it->get<std::string>();
}

}  // namespace

AnswerBook AnswerBook::parse(std::string_view text, const std::string& label) {
  AnswerBook book;
  for_each_jsonl_line(text, label, [&](const std::string& where, const Json& j) {
    if (j.is_discarded()) bad_answer(where, "not valid JSON");
    if (!j.is_object()) bad_answer(where, "not a JSON object");
    if (json_str(j, "schema") != kEvalAnswerSchema)
      bad_answer(where, fmt::format("\"schema\" must be \"{}\"", kEvalAnswerSchema));
    RecordedAnswer a;
    a.key.model = field(j, "model", where);
    a.key.context_digest = field(j, "context_digest", where);
    a.key.question = field(j, "question", where);
    a.probe = field(j, "probe", where);
    a.context = field(j, "context", where);
    a.answer = field(j, "answer", where);
    if (auto w = j.find("window_tokens"); w != j.end()) {
      if (!w->is_number_integer() || w->get<std::int64_t>() < 0) bad_answer(where, "\"window_tokens\" must be a non-negative integer");
      a.window_tokens = w->get<std::int64_t>();
    }
    book.add(std::move(a));
  });
  return book;
}

std::optional<std::string> AnswerBook::find(const AnswerKey& key) const {
  auto it = answers_.find(key);
  if (it == answers_.end()) return std::nullopt;
  return it->second.answer;
}

std::int64_t AnswerBook::window_tokens(const std::string& model) const {
  std::int64_t w = 0;
  for (const auto& [k, a] : answers_)
    if (k.model == model) w = std::max(w, a.window_tokens);
  return w;
}

std::vector<std::string> AnswerBook::models() const {
  std::set<std::string> m;
  for (const auto& [k, a] : answers_) m.insert(k.model);
  return {m.begin(), m.end()};
}

void AnswerBook::add(RecordedAnswer a) {
  AnswerKey k = a.key;
  answers_[k] = std::move(a);
}

std::string AnswerBook::to_jsonl() const {
  std::string out;
  for (const auto& [k, a] : answers_) {
    Json j{{"schema", kEvalAnswerSchema}, {"model", k.model},   {"context_digest", k.context_digest},
           {"question", k.question},      {"probe", a.probe},   {"context", a.context},
           {"answer", a.answer},          {"window_tokens", a.window_tokens}};
    out += dump_json(j) + "\n";
  }
  return out;
}

}  // namespace ctxfold
