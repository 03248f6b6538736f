// openai:MODEL — any OpenAI-compatible chat-completions endpoint
// (platform.openai.com/docs/api-reference/chat/create).
#include <fmt/format.h>

#include <utility>

#include "summarize/providers.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {
namespace {

constexpr std::string_view kOpenaiProvider = "openai";

/// Reasoning models reject max_tokens and want max_completion_tokens.
bool wants_max_completion_tokens(std::string_view model) {
  for (std::string_view p : {"o1", "o3", "o4", "gpt-5"}) {
    if (model.substr(0, p.size()) == p) return true;
  }
  return false;
}

class OpenAiSummarizer final : public Summarizer {
 public:
  OpenAiSummarizer(std::string model, ProviderConfig config) : model_(std::move(model)), config_(std::move(config)) {}

  std::string kind() const override { return "openai"; }
  std::string model() const override { return model_; }
  std::int64_t window_tokens() const override { return config_.window_tokens; }

  SummaryResult summarize(const SummaryRequest& req) override {
    std::vector<HttpHeader> headers;
    if (!config_.api_key.empty()) {
      headers.push_back({"Authorization", "Bearer " + config_.api_key});
    } else if (config_.base_url == kOpenAiDefaultBaseUrl) {
      throw Error(Exit::environment, "summarizer.auth", "openai: OPENAI_API_KEY is not set",
                  "export OPENAI_API_KEY, or point OPENAI_BASE_URL at a server that needs no key");
    }
    Json messages = Json::array({Json{{"role", "system"}, {"content", summary_system_prompt(req)}},
                                 Json{{"role", "user"}, {"content", summary_user_message(req)}}});
    const std::int64_t max_out = req.max_output_tokens > 0 ? req.max_output_tokens : 4096;
    bool completion_field = wants_max_completion_tokens(model_);
    for (bool switched = false;;) {
      Json body{{"model", model_}, {"messages", messages}};
      body[completion_field ? "max_completion_tokens" : "max_tokens"] = max_out;
      HttpResponse r =
          http_post_json(config_.base_url + "/chat/completions", headers, dump_json(body), config_.http);
      if (r.status >= 200 && r.status < 300) return parse_answer(r);
      ProviderError e = parse_provider_error(r.body);
      // The server names the token-limit field it does not take: use the other one, once.
      if (!switched && r.status == 400 && (e.param == "max_tokens" || e.param == "max_completion_tokens") &&
          (e.code == "unsupported_parameter" || e.message.find("Unsupported parameter") != std::string::npos)) {
        completion_field = e.param == "max_tokens";
        switched = true;
        continue;
      }
      fail(r, e);
    }
  }

 private:
  [[noreturn]] void fail(const HttpResponse& r, const ProviderError& e) const {
    const std::string& key = config_.api_key;
    if (r.status == 401 || r.status == 403) {
      // The provider's text may quote part of the key: say only what happened.
      throw_summarizer_error(kOpenaiProvider, "summarizer.auth", fmt::format("the API key was rejected (HTTP {})", r.status),
                             key, "check OPENAI_API_KEY and OPENAI_BASE_URL");
    }
    if (e.code == "context_length_exceeded" || r.status == 413 || mentions_context_limit(e.message)) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.context_length",
                             fmt::format("the input exceeds the context of model '{}' (HTTP {}): {}", model_,
                                         r.status, e.message),
                             key, "set CTXFOLD_SUMMARIZER_WINDOW to the model's real window");
    }
    std::string what = e.message.empty() ? std::string("no error message") : e.message;
    if (r.status == 429 || r.status >= 500) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.http",
                             fmt::format("HTTP {} after {} attempts: {}", r.status, r.attempts, what), key,
                             "the provider is rate limited or unavailable; retry later");
    }
    throw_summarizer_error(kOpenaiProvider, "summarizer.http", fmt::format("HTTP {}: {}", r.status, what), key);
  }

  SummaryResult parse_answer(const HttpResponse& r) const {
    const std::string& key = config_.api_key;
    Json j;
    try {
      j = parse_json(r.body);
    } catch (const nlohmann::json::exception&) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.malformed", "the answer is not JSON: " + r.body, key);
    }
    if (!j.is_object()) throw_summarizer_error(kOpenaiProvider, "summarizer.malformed", "the answer is not a JSON object", key);
    if (!j.contains("choices") && j.contains("error")) fail(r, parse_provider_error(r.body));
    auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.malformed", "the answer has no choices[0]", key);
    }
    const Json& choice = (*choices)[0];
    auto message = choice.find("message");
    if (message == choice.end() || !message->is_object()) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.malformed", "the answer has no choices[0].message", key);
    }
    std::string text;
    auto content = message->find("content");
    if (content != message->end() && content->is_string()) {
      text = content->get<std::string>();
    } else if (content != message->end() && content->is_array()) {  // content parts
      for (const Json& part : *content) text += json_str(part, "text");
    } else if (std::string refusal = json_str(*message, "refusal"); !refusal.empty()) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.empty", "the model refused: " + refusal, key);
    } else if (content == message->end() || !content->is_null()) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.malformed", "choices[0].message.content is not text", key);
    }
    if (blank_summary(text)) {
      throw_summarizer_error(kOpenaiProvider, "summarizer.empty",
                             fmt::format("the model '{}' returned an empty summary (finish_reason {})", model_,
                                         json_str(choice, "finish_reason", "unknown")),
                             key);
    }
    return provider_result(std::move(text), j, model_);
  }

  std::string model_;
  ProviderConfig config_;
};

}  // namespace

std::unique_ptr<Summarizer> make_openai_summarizer(std::string model, ProviderConfig config) {
  return std::make_unique<OpenAiSummarizer>(std::move(model), std::move(config));
}

}  // namespace ctxfold
