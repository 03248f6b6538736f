#include "summarize/spec.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace ctxfold {

SummarizerSpec parse_summarizer_spec(const std::string& spec) {
  static constexpr const char* kHint = "use extractive, openai:MODEL, anthropic:MODEL, command:CMD or replay:DIR";
  if (spec == "extractive") return {"extractive", {}};
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  if (kind != "openai" && kind != "anthropic" && kind != "command" && kind != "replay") {
    throw Error(Exit::usage, "summarizer.spec", fmt::format("unknown summarizer '{}'", spec), kHint);
  }
  std::string arg = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  if (arg.find_first_not_of(" \t") == std::string::npos) {
    throw Error(Exit::usage, "summarizer.spec",
                fmt::format("summarizer '{}' needs {}", spec, kind == "command" ? "a command" : kind == "replay" ? "a directory" : "a model name"), kHint);
  }
  return {kind, arg};
}

}  // namespace ctxfold
