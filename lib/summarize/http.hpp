#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "util/environment.hpp"

namespace ctxfold {

/// One request header. Values are treated as secrets: they are never written into an error
/// message (an Authorization or x-api-key header carries the API key).
struct HttpHeader {
  std::string name;
  std::string value;
};

/// Limits of one logical POST (all attempts together).
struct HttpOptions {
  std::chrono::milliseconds connect_timeout{10'000};  ///< per attempt, TCP + TLS handshake
  std::chrono::milliseconds timeout{300'000};         ///< per attempt, whole exchange
  int max_retries = 3;                                ///< retries after the first attempt
  std::chrono::milliseconds initial_backoff{1'000};   ///< doubled after every retry
  std::chrono::milliseconds max_backoff{30'000};
  /// A Retry-After longer than this is not waited for: the last response is returned instead.
  std::chrono::milliseconds max_retry_after{60'000};
  std::size_t max_response_bytes = 64u << 20;         ///< larger answers fail as summarizer.http
};

/// HttpOptions with the environment's overrides, each a decimal integer:
/// CTXFOLD_HTTP_TIMEOUT_MS, CTXFOLD_HTTP_CONNECT_TIMEOUT_MS, CTXFOLD_HTTP_RETRIES,
/// CTXFOLD_HTTP_BACKOFF_MS (initial backoff). Throws Error(usage, "summarizer.config") for a
/// value that is not a non-negative integer (timeouts must be positive).
HttpOptions http_options_from_env(const Environment& env);

/// The final answer of http_post_json.
struct HttpResponse {
  long status = 0;     ///< HTTP status code of the last attempt
  std::string body;    ///< its body, as received
  int attempts = 0;    ///< requests sent, retries included
};

/// POSTs `body` (JSON) to `url` with `headers` plus Content-Type: application/json.
/// Retries, at most opts.max_retries times, on 429 and every 5xx (Anthropic's 529 "overloaded"
/// included) and on connection failures, waiting Retry-After (seconds) or retry-after-ms when the
/// server sends one, else an exponential backoff; a 4xx other than 429 is returned at once.
/// Returns the last response whatever its status — mapping statuses to errors is the caller's.
/// Throws Error(environment, "summarizer.timeout") when an attempt exceeds its timeout (a hang
/// is not retried: it would multiply the wait) and Error(environment, "summarizer.http") for
/// other transport failures. Only http and https are allowed and redirects are not followed, so
/// headers never travel to another host. Error messages name the endpoint without query or
/// credentials and never contain a header value.
HttpResponse http_post_json(const std::string& url, const std::vector<HttpHeader>& headers,
                            const std::string& body, const HttpOptions& opts);

/// `text` with every occurrence of each non-empty secret replaced by "[redacted]".
std::string redact(std::string text, const std::vector<std::string>& secrets);

/// `url` reduced to scheme://host[:port]/path, with user info, query and fragment dropped, for
/// error messages.
std::string display_url(const std::string& url);

}  // namespace ctxfold
