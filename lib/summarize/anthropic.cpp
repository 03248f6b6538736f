// anthropic:MODEL — the Messages API (docs.anthropic.com/en/api/messages, /en/api/errors).
#include <fmt/format.h>

#include <utility>

#include "summarize/providers.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {
namespace {

constexpr std::string_view kAnthropicProvider = "anthropic";

class AnthropicSummarizer final : public Summarizer {
 public:
  AnthropicSummarizer(std::string model, ProviderConfig config)
      : model_(std::move(model)), config_(std::move(config)) {}

  std::string kind() const override { return "anthropic"; }
  std::string model() const override { return model_; }
  std::int64_t window_tokens() const override { return config_.window_tokens; }

  SummaryResult summarize(const SummaryRequest& req) override {
    std::vector<HttpHeader> headers{{"anthropic-version", std::string(kAnthropicVersion)}};
    if (!config_.api_key.empty()) {
      headers.push_back({"x-api-key", config_.api_key});
    } else if (config_.base_url == kAnthropicDefaultBaseUrl) {
      throw Error(Exit::environment, "summarizer.auth", "anthropic: ANTHROPIC_API_KEY is not set",
                  "export ANTHROPIC_API_KEY, or point ANTHROPIC_BASE_URL at a server that needs no key");
    }
    Json body{
        {"model", model_},
        {"max_tokens", req.max_output_tokens > 0 ? req.max_output_tokens : 4096},
        {"system", summary_system_prompt(req)},
        {"messages", Json::array({Json{{"role", "user"}, {"content", summary_user_message(req)}}})},
    };
    HttpResponse r = http_post_json(config_.base_url + "/v1/messages", headers, dump_json(body), config_.http);
    if (r.status >= 200 && r.status < 300) return parse_answer(r);
    fail(r, parse_provider_error(r.body));
  }

 private:
  [[noreturn]] void fail(const HttpResponse& r, const ProviderError& e) const {
    const std::string& key = config_.api_key;
    if (r.status == 401 || r.status == 403 || e.type == "authentication_error" || e.type == "permission_error") {
      throw_summarizer_error(kAnthropicProvider, "summarizer.auth",
                             fmt::format("the API key was rejected (HTTP {}, {})", r.status,
                                         e.type.empty() ? std::string("no error type") : e.type),
                             key, "check ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL");
    }
    if (r.status == 413 || e.type == "request_too_large" ||
        (e.type == "invalid_request_error" && mentions_context_limit(e.message))) {
      throw_summarizer_error(kAnthropicProvider, "summarizer.context_length",
                             fmt::format("the input exceeds the context of model '{}' (HTTP {}): {}", model_,
                                         r.status, e.message),
                             key, "set CTXFOLD_SUMMARIZER_WINDOW to the model's real window");
    }
    std::string what = e.type.empty() ? std::string("no error type") : e.type;
    if (!e.message.empty()) what += ": " + e.message;
    if (r.status == 429 || r.status >= 500) {  // rate_limit_error, api_error, overloaded_error (529)
      throw_summarizer_error(kAnthropicProvider, "summarizer.http",
                             fmt::format("HTTP {} after {} attempts: {}", r.status, r.attempts, what), key,
                             "the provider is rate limited or overloaded; retry later");
    }
    throw_summarizer_error(kAnthropicProvider, "summarizer.http", fmt::format("HTTP {}: {}", r.status, what), key);
  }

  SummaryResult parse_answer(const HttpResponse& r) const {
    const std::string& key = config_.api_key;
    Json j;
    try {
      j = parse_json(r.body);
    } catch (const nlohmann::json::exception&) {
      throw_summarizer_error(kAnthropicProvider, "summarizer.malformed", "the answer is not JSON: " + r.body, key);
    }
    if (!j.is_object()) throw_summarizer_error(kAnthropicProvider, "summarizer.malformed", "the answer is not a JSON object", key);
    if (json_str(j, "type") == "error") fail(r, parse_provider_error(r.body));
    auto content = j.find("content");
    if (content == j.end() || !content->is_array()) {
      throw_summarizer_error(kAnthropicProvider, "summarizer.malformed", "the answer has no content[]", key);
    }
    std::string text;
    for (const Json& block : *content) {
      if (json_str(block, "type") == "text") text += json_str(block, "text");
    }
    const std::string stop = json_str(j, "stop_reason", "unknown");
    if (blank_summary(text)) {
      throw_summarizer_error(kAnthropicProvider, "summarizer.empty",
                             fmt::format("the model '{}' returned an empty summary (stop_reason {})", model_, stop),
                             key);
    }
    if (stop == "refusal") throw_summarizer_error(kAnthropicProvider, "summarizer.empty", "the model refused: " + text, key);
    return provider_result(std::move(text), j, model_);
  }

  std::string model_;
  ProviderConfig config_;
};

}  // namespace

std::unique_ptr<Summarizer> make_anthropic_summarizer(std::string model, ProviderConfig config) {
  return std::make_unique<AnthropicSummarizer>(std::move(model), std::move(config));
}

}  // namespace ctxfold
