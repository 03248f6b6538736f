#pragma once
#include <string_view>
#include <vector>

namespace ctxfold {

/// The prompt version used when a SummaryRequest names none; recorded in provenance by the caller.
inline constexpr std::string_view kDefaultPromptVersion = "rolling-v2";

/// The text of share/prompts/NAME.txt embedded at build time (cmake/embed.cmake), NAME being the
/// file's base name, which is also its version ("rolling-v2"). Empty when no such prompt exists.
std::string_view embedded_prompt(std::string_view name);

/// The base names of every embedded prompt, sorted.
std::vector<std::string_view> embedded_prompt_names();

}  // namespace ctxfold
