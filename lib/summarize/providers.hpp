#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "summarize/http.hpp"
#include "summarize/summarizer.hpp"

namespace ctxfold {

/// Where and how an HTTP summarizer talks to its provider.
struct ProviderConfig {
  std::string base_url;          ///< without trailing slash
  std::string api_key;           ///< may be empty for a custom base URL (a local server)
  std::int64_t window_tokens = 0;
  HttpOptions http;
};

inline constexpr std::string_view kOpenAiDefaultBaseUrl = "https://api.openai.com/v1";
inline constexpr std::string_view kAnthropicDefaultBaseUrl = "https://api.anthropic.com";
/// The Messages API version header value (docs.anthropic.com, "Versions").
inline constexpr std::string_view kAnthropicVersion = "2023-06-01";

/// The input window in tokens of a model: CTXFOLD_SUMMARIZER_WINDOW when set (a positive
/// integer, else Error(usage, "summarizer.config")), else a small built-in table by model name
/// prefix, else 128000 for kind "openai" and 200000 for "anthropic".
std::int64_t summarizer_window_tokens(std::string_view kind, std::string_view model, const Environment& env);

/// OPENAI_BASE_URL (default kOpenAiDefaultBaseUrl), OPENAI_API_KEY, the window and the
/// CTXFOLD_HTTP_* limits.
ProviderConfig openai_config_from_env(std::string_view model, const Environment& env);
/// ANTHROPIC_BASE_URL (default kAnthropicDefaultBaseUrl), ANTHROPIC_API_KEY, the window and the
/// CTXFOLD_HTTP_* limits.
ProviderConfig anthropic_config_from_env(std::string_view model, const Environment& env);

/// openai:MODEL — POST {base}/chat/completions, Authorization: Bearer KEY, body {model,
/// messages:[system prompt, user data], max_tokens} (max_completion_tokens for o-series and
/// gpt-5 models, or after the server rejects max_tokens as unsupported); the summary is
/// choices[0].message.content. Failures: error.code "context_length_exceeded" (or a message
/// about the maximum context length) -> summarizer.context_length; 401/403 -> summarizer.auth;
/// unparsable body or no content -> summarizer.malformed; blank content or a refusal ->
/// summarizer.empty; hang -> summarizer.timeout; anything else -> summarizer.http.
std::unique_ptr<Summarizer> make_openai_summarizer(std::string model, ProviderConfig config);

/// anthropic:MODEL — POST {base}/v1/messages, x-api-key: KEY, anthropic-version: 2023-06-01,
/// body {model, max_tokens, system, messages:[{role:"user", content}]}; the summary is the
/// concatenated text blocks of content[]. Failures: invalid_request_error about a too long
/// prompt or the context, or 413 -> summarizer.context_length; authentication_error /
/// permission_error / 401 / 403 -> summarizer.auth; rate_limit_error (429), overloaded_error
/// (529) and api_error (5xx) are retried, then summarizer.http; unparsable body or no content[]
/// -> summarizer.malformed; no text -> summarizer.empty; hang -> summarizer.timeout.
std::unique_ptr<Summarizer> make_anthropic_summarizer(std::string model, ProviderConfig config);

// ---- shared by openai.cpp and anthropic.cpp ----

/// The system prompt named by req.prompt_version (kDefaultPromptVersion when empty).
/// Throws Error(internal, "summarizer.prompt") when no such prompt is embedded.
std::string summary_system_prompt(const SummaryRequest& req);

/// The result of a successful call: the summary text, the model the response names (the snapshot
/// that answered) or else the configured one, and the response's usage object when it has one.
SummaryResult provider_result(std::string text, const Json& response, const std::string& configured_model);

/// The user message share/prompts/rolling-v2.txt describes: <previous-summary> (omitted when
/// empty), <transcript>, then <instructions> (omitted when empty), each block on its own lines.
/// A closing tag of these blocks inside the data is defused ("</transcript" -> "<\/transcript").
std::string summary_user_message(const SummaryRequest& req);

/// The error object of a provider's error body, for both wire shapes: OpenAI's
/// {"error":{"message","type","code","param"}} and Anthropic's
/// {"type":"error","error":{"type","message"}}. Fields are empty when absent.
struct ProviderError {
  std::string type;
  std::string code;
  std::string message;
  std::string param;
};
ProviderError parse_provider_error(const std::string& body);

/// True when a provider's error message says the input exceeds the model's context.
bool mentions_context_limit(std::string_view message);

/// True when a provider's answer text holds nothing but spaces, tabs and line breaks: an empty
/// summary, which both HTTP summarizers refuse (error code summarizer.empty).
bool blank_summary(std::string_view text);

/// Throws Error(environment, code, "PROVIDER: DETAIL") with DETAIL cut to a few hundred bytes
/// (never inside a UTF-8 sequence) and `secret` redacted from it.
[[noreturn]] void throw_summarizer_error(std::string_view provider, const std::string& code,
                                         const std::string& detail, const std::string& secret,
                                         std::string hint = {});

}  // namespace ctxfold
