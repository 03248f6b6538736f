// Redaction of every text a summarizer hands out (summarize/secrets.hpp): which values count as
// secrets, and the command: and replay: summarizers built by make_summarizer, whose summaries,
// model names, errors and interruption notices never carry them.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "summarize/recorded.hpp"
#include "summarize/secrets.hpp"
#include "summarize/summarizer.hpp"
#include "util/error.hpp"
#include "util/json.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

constexpr const char* kToken = "tok-cmd-SECRET-4567";
constexpr const char* kVar = "CTXFOLD_TEST_SUMMARIZER_TOKEN";

/// The variable set both in the fake environment (what ctxfold reads) and in the process (what
/// the summarizer command inherits), unset again after the test.
class CommandSecretsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv(kVar, kToken, 1);
    env_.set(kVar, kToken);
    env_.set("CTXFOLD_SUMMARIZER_TIMEOUT_MS", "20000");
  }
  void TearDown() override { ::unsetenv(kVar); }

  Error failure(const std::string& spec) {
    auto s = make_summarizer(spec, env_);
    try {
      s->summarize(request());
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << spec << ": no error";
    return Error(Exit::internal, "test.none", "no error");
  }
  static SummaryRequest request() {
    SummaryRequest r;
    r.transcript = "user: hello";
    return r;
  }

  testing_env::FakeEnvironment env_;
};

TEST(SecretNamesTest, NamesThatLookSecret) {
  for (const char* n : {"OPENAI_API_KEY", "github_token", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD", "MYSQL_PASSWD", "ApiKey"})
    EXPECT_TRUE(secret_variable_name(n)) << n;
  for (const char* n : {"HOME", "PATH", "LANG", "CTXFOLD_SUMMARIZER_WINDOW", "TERM"}) EXPECT_FALSE(secret_variable_name(n)) << n;
}

TEST(SecretNamesTest, SecretsAreTheConfiguredKeysAndSecretLookingVariablesLongestFirst) {
  testing_env::FakeEnvironment env;
  env.set("MY_TOKEN", "tok-1234567890");
  env.set("OTHER_SECRET", "tok-1234567890-and-more");
  env.set("SHORT_KEY", "abc1234");                 // under kMinSecretBytes: left alone
  env.set("HOME", "/home/someone-with-a-long-name");  // not a secret's name
  env.set("DUP_KEY", "sk-conf-XYZ12345");
  const std::vector<std::string> s = summarizer_secrets(env, {"sk-conf-XYZ12345", ""});
  EXPECT_EQ(s, (std::vector<std::string>{"tok-1234567890-and-more", "sk-conf-XYZ12345", "tok-1234567890"}));
}

/// A summarizer whose every text holds the key, for the wrapper alone.
class Leaky : public Summarizer {
 public:
  explicit Leaky(bool fail) : fail_(fail) {}
  std::string kind() const override { return "leaky"; }
  std::string model() const override { return std::string("model-") + kToken; }
  std::int64_t window_tokens() const override { return 1000; }
  SummaryResult summarize(const SummaryRequest&) override {
    if (fail_) throw Error(Exit::environment, "summarizer.http", std::string("echoed ") + kToken, std::string("hint ") + kToken);
    SummaryResult r;
    r.text = std::string("summary ") + kToken + " twice " + kToken;
    r.model = kToken;
    r.usage = Json{{"note", kToken}, {"nested", Json::array({std::string("x") + kToken})}, {"n", 3}};
    return r;
  }

 private:
  bool fail_;
};

TEST(RedactingSummarizerTest, EveryTextGoesOutRedacted) {
  auto ok = redacting_summarizer(std::make_unique<Leaky>(false), {kToken});
  EXPECT_EQ(ok->kind(), "leaky");
  EXPECT_EQ(ok->model(), "model-[redacted]");
  SummaryResult r = ok->summarize({});
  EXPECT_EQ(r.text, "summary [redacted] twice [redacted]");
  EXPECT_EQ(r.model, "[redacted]");
  EXPECT_EQ(dump_json(r.usage), R"({"note":"[redacted]","nested":["x[redacted]"],"n":3})");
  auto bad = redacting_summarizer(std::make_unique<Leaky>(true), {kToken});
  try {
    bad->summarize({});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::environment);
    EXPECT_EQ(e.code(), "summarizer.http");
    EXPECT_STREQ(e.what(), "echoed [redacted]");
    EXPECT_EQ(e.hint(), "hint [redacted]");
  }
}

TEST_F(CommandSecretsTest, AKeyTheCommandPrintsOnStdoutIsRedactedFromTheSummary) {
  auto s = make_summarizer(std::string("command:cat >/dev/null; echo \"summary: the key is $") + kVar + "\"", env_);
  EXPECT_EQ(s->summarize(request()).text, "summary: the key is [redacted]");
  auto js = make_summarizer(std::string("command:cat >/dev/null; printf '{\"summary\":\"k=%s\"}' \"$") + kVar + "\"", env_);
  EXPECT_EQ(js->summarize(request()).text, "k=[redacted]");
}

TEST_F(CommandSecretsTest, AKeyOnStderrNeverReachesTheError) {
  Error e = failure(std::string("command:cat >/dev/null; echo \"auth failed for $") + kVar + "\" >&2; exit 3");
  EXPECT_EQ(e.code(), "summarizer.command");
  EXPECT_EQ(std::string(e.what()).find(kToken), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("auth failed for [redacted]"), std::string::npos) << e.what();
}

TEST_F(CommandSecretsTest, AKeyWrittenIntoTheCommandLineIsRedactedFromItsName) {
  const std::string cmd = std::string("cat >/dev/null; echo ") + kToken + " >&2; exit 1";
  auto s = make_summarizer("command:" + cmd, env_);
  EXPECT_EQ(s->model().find(kToken), std::string::npos) << s->model();
  Error e = failure("command:" + cmd);
  EXPECT_EQ(std::string(e.what()).find(kToken), std::string::npos) << e.what();
}

TEST_F(CommandSecretsTest, TheInterruptionNoticeDoesNotQuoteAKeyInTheCommand) {
  env_.stop_signal = SIGTERM;
  env_.stop_after_waits = 2;
  auto s = make_summarizer(std::string("command:sleep 30; echo ") + kToken, env_);
  EXPECT_THROW(s->summarize(request()), testing_env::Died);
  ASSERT_EQ(env_.diagnostics.size(), 1u);
  EXPECT_EQ(env_.diagnostics[0].find(kToken), std::string::npos) << env_.diagnostics[0];
  EXPECT_NE(env_.diagnostics[0].find("[redacted]"), std::string::npos) << env_.diagnostics[0];
}

TEST_F(CommandSecretsTest, ARecordedAnswerHoldingAKeyIsRedactedOnReplay) {
  const fs::path dir = fs::temp_directory_path() / ("ctxfold-secrets-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const SummaryRequest req = request();
  const std::string digest = request_digest(req);
  std::ofstream(dir / (digest + ".json"))
      << dump_json(Json{{"request_digest", digest},
                        {"response", {{"text", std::string("recorded ") + kToken}, {"model", "m"}, {"usage", Json::object()}}}});
  auto s = make_summarizer("replay:" + dir.string(), env_);
  EXPECT_EQ(s->summarize(req).text, "recorded [redacted]");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ctxfold
