#pragma once
// What a summarizer's texts are cleaned of before anything else sees them (docs/strategies.md
// "Summarizers and secrets"): its API keys and the values of the secret-looking environment
// variables, redacted from the summary, the model name and every error it throws.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "summarize/summarizer.hpp"
#include "util/environment.hpp"

namespace ctxfold {

/// Values shorter than this many bytes, configured keys included, are not redacted: too short to
/// be a real key, and common enough that replacing them would mangle ordinary text.
inline constexpr std::size_t kMinSecretBytes = 8;

/// Whether an environment variable's name looks like it holds a secret: it contains KEY, TOKEN,
/// SECRET, PASSWORD or PASSWD, in any case (OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
/// PGPASSWORD).
bool secret_variable_name(std::string_view name);

/// The secrets a summarizer's texts are cleaned of: each of `configured` (the API keys it was
/// configured with) and the value of every variable of `env` whose name looks secret
/// (secret_variable_name, Environment::variable_names), those shorter than kMinSecretBytes left
/// out; no duplicates, longest first (a key that holds another is replaced whole).
std::vector<std::string> summarizer_secrets(const Environment& env,
                                            const std::vector<std::string>& configured);

/// `inner` with every text it gives out redacted of `secrets` (redact in summarize/http.hpp:
/// each occurrence becomes "[redacted]"): the summary text and model of a SummaryResult, every
/// string inside its usage object, model(), and the message and hint of an Error that summarize
/// throws (rethrown with the same exit code and error code). kind(), window_tokens() and
/// transcript_options() are inner's.
std::unique_ptr<Summarizer> redacting_summarizer(std::unique_ptr<Summarizer> inner,
                                                 std::vector<std::string> secrets);

}  // namespace ctxfold
