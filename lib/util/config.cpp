#include "util/config.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.hpp"
#include "util/json_error.hpp"

namespace ctxfold {

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Exit::environment, "config.read", fmt::format("cannot read config file '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<std::string> user_default(const Environment& env) {
  std::filesystem::path dir;
  if (auto x = env.variable("XDG_CONFIG_HOME"))
    dir = *x;
  else if (auto h = env.variable("HOME"))
    dir = std::filesystem::path(*h) / ".config";
  else
    return std::nullopt;
  std::filesystem::path p = dir / "ctxfold" / "config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) return std::nullopt;
  return p.string();
}
}  // namespace

Json parse_config_text(const std::string& text, const std::string& path) {
  Json j;
  try {
    j = parse_json(text);
  } catch (const nlohmann::json::parse_error& e) {
    const JsonErrorAt at = json_error_at(text, e);
    throw Error(Exit::bad_input, "config.invalid",
                fmt::format("{}:{}:{}: config is not valid JSON: {}", path, at.line, at.col, at.what));
  } catch (const nlohmann::json::exception& e) {
    throw Error(Exit::bad_input, "config.invalid", fmt::format("{}: config is not valid JSON: {}", path, e.what()));
  }
  if (!j.is_object())
    throw Error(Exit::bad_input, "config.invalid", fmt::format("{}:1:1: config must be a JSON object with a section per strategy", path));
  return j;
}

ConfigSource load_config(const std::optional<std::string>& flag, const Environment& env) {
  ConfigSource c;
  if (flag) {
    c.path = *flag;
    c.origin = "--config";
  } else if (auto from_env = env.variable("CTXFOLD_CONFIG")) {
    c.path = *from_env;
    c.origin = "CTXFOLD_CONFIG";
  } else if (auto u = user_default(env)) {
    c.path = *u;
    c.origin = "user";
  }
  if (c.path) c.value = parse_config_text(read_file(*c.path), *c.path);
  return c;
}

}  // namespace ctxfold
