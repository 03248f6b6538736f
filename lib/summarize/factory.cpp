// make_summarizer (summarizer.hpp): one place that turns a --summarizer spec into a summarizer.
#include <utility>

#include "summarize/command.hpp"
#include "summarize/providers.hpp"
#include "summarize/recorded.hpp"
#include "summarize/secrets.hpp"
#include "summarize/spec.hpp"
#include "summarize/summarizer.hpp"
#include "util/error.hpp"

namespace ctxfold {

std::unique_ptr<Summarizer> make_summarizer(const std::string& spec, Environment& env) {
  SummarizerSpec s = parse_summarizer_spec(spec);
  if (s.kind == "openai") {
    ProviderConfig config = openai_config_from_env(s.arg, env);
    std::vector<std::string> secrets = summarizer_secrets(env, {config.api_key});
    return redacting_summarizer(make_openai_summarizer(std::move(s.arg), std::move(config)),
                                std::move(secrets));
  }
  if (s.kind == "anthropic") {
    ProviderConfig config = anthropic_config_from_env(s.arg, env);
    std::vector<std::string> secrets = summarizer_secrets(env, {config.api_key});
    return redacting_summarizer(make_anthropic_summarizer(std::move(s.arg), std::move(config)),
                                std::move(secrets));
  }
  if (s.kind == "replay")
    return redacting_summarizer(make_replay_summarizer(std::move(s.arg)), summarizer_secrets(env, {}));
  if (std::unique_ptr<Summarizer> local = make_local_summarizer(spec, env)) return local;  // extractive, command:
  throw Error(Exit::internal, "summarizer.spec", "no summarizer for kind '" + s.kind + "'");
}

}  // namespace ctxfold
