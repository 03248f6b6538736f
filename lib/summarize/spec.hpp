#pragma once
#include <string>

namespace ctxfold {

/// A parsed --summarizer value (docs/strategies.md "Summarizers").
struct SummarizerSpec {
  std::string kind;  ///< "extractive" | "openai" | "anthropic" | "command" | "replay"
  std::string arg;   ///< the model or the command line; empty for extractive
};

/// Splits "extractive", "openai:MODEL", "anthropic:MODEL", "command:CMD" or "replay:DIR" at the first ':', so
/// a model name with its own ':' ("openai:llama3:8b" -> "llama3:8b") is kept whole. Throws
/// Error(usage, "summarizer.spec") for any other kind or an empty MODEL/CMD.
SummarizerSpec parse_summarizer_spec(const std::string& spec);

}  // namespace ctxfold
