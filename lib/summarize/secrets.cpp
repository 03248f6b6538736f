// Redaction of a summarizer's texts (secrets.hpp): which values are secrets, and the wrapper
// that cleans every text a summarizer hands out.
#include "summarize/secrets.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "summarize/http.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {

bool secret_variable_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  static constexpr std::array<std::string_view, 5> kWords{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"};
  return std::any_of(kWords.begin(), kWords.end(),
                     [&](std::string_view w) { return upper.find(w) != std::string::npos; });
}

std::vector<std::string> summarizer_secrets(const Environment& env,
                                            const std::vector<std::string>& configured) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& v) {
    if (v.size() >= kMinSecretBytes && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  for (const std::string& v : configured) add(v);
  for (const std::string& name : env.variable_names()) {
    if (!secret_variable_name(name)) continue;
    if (std::optional<std::string> v = env.variable(name)) add(*v);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

namespace {

/// Every string in `j` (keys included) redacted of `secrets`.
Json redact_json(const Json& j, const std::vector<std::string>& secrets) {
  if (j.is_string()) return redact(j.get<std::string>(), secrets);
  if (j.is_array()) {
    Json out = Json::array();
    for (const Json& v : j) out.push_back(redact_json(v, secrets));
    return out;
  }
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it)
      out[redact(it.key(), secrets)] = redact_json(it.value(), secrets);
    return out;
  }
  return j;
}

class RedactingSummarizer final : public Summarizer {
 public:
  RedactingSummarizer(std::unique_ptr<Summarizer> inner, std::vector<std::string> secrets)
      : inner_(std::move(inner)), secrets_(std::move(secrets)) {}

  std::string kind() const override { return inner_->kind(); }
  std::string model() const override { return redact(inner_->model(), secrets_); }
  std::int64_t window_tokens() const override { return inner_->window_tokens(); }
  TranscriptOptions transcript_options() const override { return inner_->transcript_options(); }

  SummaryResult summarize(const SummaryRequest& req) override {
    SummaryResult r;
    try {
      r = inner_->summarize(req);
    } catch (const Error& e) {
      throw Error(e.exit(), e.code(), redact(e.what(), secrets_), redact(e.hint(), secrets_));
    }
    r.text = redact(std::move(r.text), secrets_);
    r.model = redact(std::move(r.model), secrets_);
    r.usage = redact_json(r.usage, secrets_);
    return r;
  }

 private:
  std::unique_ptr<Summarizer> inner_;
  std::vector<std::string> secrets_;
};

}  // namespace

std::unique_ptr<Summarizer> redacting_summarizer(std::unique_ptr<Summarizer> inner,
                                                 std::vector<std::string> secrets) {
  return std::make_unique<RedactingSummarizer>(std::move(inner), std::move(secrets));
}

}  // namespace ctxfold
