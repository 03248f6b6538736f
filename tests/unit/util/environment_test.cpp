// The environment seam (docs/architecture.md "The environment seam"): configuration, summarizer
// settings and the clock read through an Environment the test controls, never the process's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fake_environment.hpp"
#include "summarize/http.hpp"
#include "summarize/providers.hpp"
#include "util/config.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;
using testing_env::FakeEnvironment;

class EnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-env-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const fs::path& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(EnvironmentTest, ConfigComesFromTheFlagThenCtxfoldConfigThenTheUserDefault) {
  FakeEnvironment env;
  EXPECT_EQ(load_config(std::nullopt, env).origin, "none");

  const std::string user = write("xdg/ctxfold/config.json", R"({"rolling":{"tailPercent":30}})");
  env.set("XDG_CONFIG_HOME", (dir_ / "xdg").string());
  ConfigSource c = load_config(std::nullopt, env);
  EXPECT_EQ(c.origin, "user");
  EXPECT_EQ(c.path, user);
  EXPECT_EQ(c.value["rolling"]["tailPercent"], 30);

  const std::string named = write("named.json", R"({"lcm":{"fanout":3}})");
  env.set("CTXFOLD_CONFIG", named);
  c = load_config(std::nullopt, env);
  EXPECT_EQ(c.origin, "CTXFOLD_CONFIG");
  EXPECT_EQ(c.value["lcm"]["fanout"], 3);

  const std::string flag = write("flag.json", "{}");
  EXPECT_EQ(load_config(flag, env).origin, "--config");

  // An empty variable counts as unset; HOME/.config is the fallback without XDG_CONFIG_HOME.
  env.set("CTXFOLD_CONFIG", "");
  env.unset("XDG_CONFIG_HOME");
  write("home/.config/ctxfold/config.json", R"({"notes":{"enabled":true}})");
  env.set("HOME", (dir_ / "home").string());
  c = load_config(std::nullopt, env);
  EXPECT_EQ(c.origin, "user");
  EXPECT_EQ(c.value["notes"]["enabled"], true);
}

TEST_F(EnvironmentTest, ANamedConfigThatCannotBeReadIsAnEnvironmentError) {
  FakeEnvironment env;
  env.set("CTXFOLD_CONFIG", (dir_ / "absent.json").string());
  try {
    load_config(std::nullopt, env);
    FAIL() << "expected config.read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "config.read");
    EXPECT_EQ(e.exit(), Exit::environment);
  }
}

TEST(EnvironmentSeamTest, SummarizerSettingsComeFromTheGivenEnvironment) {
  FakeEnvironment env;
  EXPECT_EQ(summarizer_window_tokens("openai", "gpt-4o", env), 128000);
  env.set("CTXFOLD_SUMMARIZER_WINDOW", "9000");
  EXPECT_EQ(summarizer_window_tokens("openai", "gpt-4o", env), 9000);
  env.set("CTXFOLD_HTTP_RETRIES", "7");
  env.set("CTXFOLD_HTTP_TIMEOUT_MS", "1234");
  HttpOptions h = http_options_from_env(env);
  EXPECT_EQ(h.max_retries, 7);
  EXPECT_EQ(h.timeout.count(), 1234);
  env.set("CTXFOLD_HTTP_RETRIES", "-1");
  EXPECT_THROW(http_options_from_env(env), Error);
  env.set("OPENAI_BASE_URL", "http://127.0.0.1:9/v1//");
  env.set("OPENAI_API_KEY", "k");
  env.unset("CTXFOLD_HTTP_RETRIES");
  ProviderConfig p = openai_config_from_env("gpt-4o", env);
  EXPECT_EQ(p.base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ(p.api_key, "k");
  EXPECT_EQ(p.window_tokens, 9000);
}

TEST(EnvironmentSeamTest, TimestampsAreRfc3339Utc) {
  EXPECT_EQ(rfc3339_utc(0), "1970-01-01T00:00:00Z");
  FakeEnvironment env;
  EXPECT_EQ(rfc3339_utc(env.unix_seconds()), "2025-12-01T14:40:00Z");
  EXPECT_EQ(rfc3339_utc(1'796'136'163), "2026-12-01T14:42:43Z");
}

}  // namespace
}  // namespace ctxfold
