#include "summarize/providers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <utility>

#include "summarize/prompt.hpp"
#include "util/error.hpp"
#include "util/json.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

struct WindowEntry {
  std::string_view prefix;
  std::int64_t tokens;
};

/// Published context windows (platform.openai.com/docs/models, docs.anthropic.com "Models
/// overview"); the longest matching prefix wins. Override with CTXFOLD_SUMMARIZER_WINDOW.
constexpr std::array kWindows{
    WindowEntry{"gpt-3.5-turbo", 16'385},  WindowEntry{"gpt-4-turbo", 128'000},
    WindowEntry{"gpt-4o", 128'000},        WindowEntry{"gpt-4.1", 1'047'576},
    WindowEntry{"gpt-5", 400'000},         WindowEntry{"o1-mini", 128'000},
    WindowEntry{"o1", 200'000},            WindowEntry{"o3", 200'000},
    WindowEntry{"o4-mini", 200'000},       WindowEntry{"claude-", 200'000},
};

std::string env_or(const Environment& env, const char* name, std::string_view fallback) {
  return env.variable(name).value_or(std::string(fallback));
}

std::string strip_trailing_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

std::int64_t summarizer_window_tokens(std::string_view kind, std::string_view model, const Environment& env) {
  if (const std::optional<std::string> raw = env.variable("CTXFOLD_SUMMARIZER_WINDOW")) {
    std::string_view text(*raw);
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v <= 0) {
      throw Error(Exit::usage, "summarizer.config",
                  fmt::format("CTXFOLD_SUMMARIZER_WINDOW must be a positive integer, not '{}'", text));
    }
    return v;
  }
  const WindowEntry* best = nullptr;
  for (const WindowEntry& e : kWindows) {
    if (model.substr(0, e.prefix.size()) == e.prefix && (best == nullptr || e.prefix.size() > best->prefix.size())) {
      best = &e;
    }
  }
  if (best != nullptr) return best->tokens;
  return kind == "anthropic" ? 200'000 : 128'000;
}

ProviderConfig openai_config_from_env(std::string_view model, const Environment& env) {
  ProviderConfig c;
  c.base_url = strip_trailing_slashes(env_or(env, "OPENAI_BASE_URL", kOpenAiDefaultBaseUrl));
  c.api_key = env_or(env, "OPENAI_API_KEY", "");
  c.window_tokens = summarizer_window_tokens("openai", model, env);
  c.http = http_options_from_env(env);
  return c;
}

ProviderConfig anthropic_config_from_env(std::string_view model, const Environment& env) {
  ProviderConfig c;
  c.base_url = strip_trailing_slashes(env_or(env, "ANTHROPIC_BASE_URL", kAnthropicDefaultBaseUrl));
  c.api_key = env_or(env, "ANTHROPIC_API_KEY", "");
  c.window_tokens = summarizer_window_tokens("anthropic", model, env);
  c.http = http_options_from_env(env);
  return c;
}

std::string summary_system_prompt(const SummaryRequest& req) {
  std::string_view name = req.prompt_version.empty() ? kDefaultPromptVersion : std::string_view(req.prompt_version);
  std::string_view text = embedded_prompt(name);
  if (text.empty()) {
    throw Error(Exit::internal, "summarizer.prompt", fmt::format("no prompt '{}' in share/prompts", name));
  }
  return std::string(text);
}

std::string summary_user_message(const SummaryRequest& req) {
  // A closing tag inside the data would end its block early and let the data pose as framing.
  auto defuse = [](std::string text) {
    for (std::string_view tag : {"</previous-summary", "</transcript", "</instructions"}) {
      for (std::size_t pos = text.find(tag); pos != std::string::npos; pos = text.find(tag, pos + 2)) {
        text.insert(pos + 1, "\\");
      }
    }
    return text;
  };
  std::string out;
  out.reserve(req.previous_summary.size() + req.transcript.size() + req.instructions.size() + 128);
  if (!req.previous_summary.empty()) {
    out += "<previous-summary>\n" + defuse(req.previous_summary) + "\n</previous-summary>\n\n";
  }
  out += "<transcript>\n" + defuse(req.transcript) + "\n</transcript>\n";
  if (!req.instructions.empty()) out += "\n<instructions>\n" + defuse(req.instructions) + "\n</instructions>\n";
  return out;
}

ProviderError parse_provider_error(const std::string& body) {
  ProviderError e;
  Json j;
  try {
    j = parse_json(body);
  } catch (const nlohmann::json::exception&) {
    return e;
  }
  if (!j.is_object()) return e;
  auto it = j.find("error");
  if (it == j.end()) return e;
  if (it->is_string()) {
    e.message = it->get<std::string>();
    return e;
  }
  if (!it->is_object()) return e;
  e.type = json_str(*it, "type");
  e.message = json_str(*it, "message");
  e.param = json_str(*it, "param");
  if (auto c = it->find("code"); c != it->end()) {
    e.code = c->is_string() ? c->get<std::string>() : (c->is_number() ? c->dump() : std::string());
  }
  return e;
}

bool blank_summary(std::string_view text) { return text.find_first_not_of(" \t\r\n") == std::string_view::npos; }

bool mentions_context_limit(std::string_view message) {
  std::string m = ascii_lower(message);
  static constexpr std::array kCues{
      std::string_view{"context length"}, std::string_view{"context_length"},
      std::string_view{"context window"}, std::string_view{"context limit"},
      std::string_view{"maximum context"}, std::string_view{"prompt is too long"},
      std::string_view{"too many tokens"}, std::string_view{"input is too long"},
  };
  return std::any_of(kCues.begin(), kCues.end(), [&](std::string_view c) { return m.find(c) != std::string::npos; });
}

void throw_summarizer_error(std::string_view provider, const std::string& code, const std::string& detail,
                            const std::string& secret, std::string hint) {
  static constexpr std::size_t kMaxDetail = 300;
  std::string d = redact(detail, {secret});
  if (d.size() > kMaxDetail) d = d.substr(0, utf8_safe_prefix(d, kMaxDetail)) + "...";
  d = utf8_sanitize(d);
  throw Error(Exit::environment, code, fmt::format("{}: {}", provider, d), std::move(hint));
}

SummaryResult provider_result(std::string text, const Json& response, const std::string& configured_model) {
  SummaryResult out;
  out.text = std::move(text);
  out.model = json_str(response, "model");
  if (out.model.empty()) out.model = configured_model;
  if (auto u = response.find("usage"); u != response.end() && u->is_object()) out.usage = *u;
  return out;
}

}  // namespace ctxfold
