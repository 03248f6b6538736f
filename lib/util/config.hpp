#pragma once
// The configuration file (docs/strategies.md "Settings": one JSON object with a section per
// strategy or layer — "rolling", "lcm", "snapcompact", "notes").
#include <optional>
#include <string>

#include "util/environment.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// Where the configuration came from.
struct ConfigSource {
  std::optional<std::string> path;  ///< the file read; nullopt when none applies
  /// "--config" (the flag), "CTXFOLD_CONFIG" (the environment), "user" (the per-user default
  /// $XDG_CONFIG_HOME/ctxfold/config.json, else ~/.config/ctxfold/config.json, read only when it
  /// exists) or "none".
  std::string origin = "none";
  Json value = Json::object();  ///< the parsed file (an empty object for none)
};

/// Resolves and reads the configuration: flag, then CTXFOLD_CONFIG, then the per-user default.
/// A named file (flag or environment) that cannot be read is Error(environment,"config.read");
/// a file that is not a JSON object is Error(bad_input,"config.invalid") naming the path, line
/// and column. CTXFOLD_CONFIG, XDG_CONFIG_HOME and HOME are read from `env`.
ConfigSource load_config(const std::optional<std::string>& flag, const Environment& env);

/// Parses configuration text; errors as load_config, with `path` in the message.
Json parse_config_text(const std::string& text, const std::string& path);

}  // namespace ctxfold
