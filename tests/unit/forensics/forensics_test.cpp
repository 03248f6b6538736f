// Forensics building blocks: redaction, identifier extraction, usage normalization and prices.
#include <gtest/gtest.h>

#include <set>

#include "model/identifiers.hpp"
#include "forensics/redact.hpp"
#include "forensics/usage.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

TEST(Redact, ReplacesSecretsWithStablePlaceholdersAndReportsNoSecret) {
  Redactor r;
  const std::string key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
  std::string t = "export ANTHROPIC_API_KEY=" + key + " and again " + key +
                  "\nmail me: jane.doe@example.org, cwd /home/jane/proj and /Users/bob/x, -home-jane-proj\n"
                  "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345\nAKIAABCDEFGHIJKLMNOP ghp_" +
                  std::string(36, 'a') + "\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n";
  std::string out = r.redact(t);
  EXPECT_EQ(out.find(key), std::string::npos) << out;
  EXPECT_EQ(out.find("jane"), std::string::npos) << out;
  EXPECT_EQ(out.find("bob"), std::string::npos) << out;
  EXPECT_EQ(out.find("MIIE"), std::string::npos) << out;
  EXPECT_EQ(out.find("AKIAABCDEFGHIJKLMNOP"), std::string::npos) << out;
  EXPECT_EQ(out.find("abcdefghijklmnopqrstuvwxyz012345"), std::string::npos) << out;
  // Stable: the same key twice gets one placeholder; the same user in two spellings one name.
  std::size_t first = out.find("[REDACTED:api_key:1]");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_NE(out.find("[REDACTED:api_key:1]", first + 1), std::string::npos) << out;
  EXPECT_NE(out.find("/home/user1/proj"), std::string::npos) << out;
  EXPECT_NE(out.find("-home-user1-proj"), std::string::npos) << out;
  EXPECT_NE(out.find("Bearer [REDACTED:token:"), std::string::npos) << out;
  for (const auto& rep : r.report()) {
    EXPECT_EQ(rep.placeholder.find("jane"), std::string::npos);
    EXPECT_GT(rep.count, 0);
  }
  // Already anonymous paths and ordinary words stay.
  Redactor r2;
  EXPECT_EQ(r2.redact("/home/USER/x skeleton sk-short user@localhost"), "/home/USER/x skeleton sk-short user@localhost");
  EXPECT_TRUE(r2.report().empty());
}

TEST(Redact, JsonKeepsOpaquePayloads) {
  Redactor r;
  Json j = Json::parse(R"({"a":"x@y.com","encrypted_content":"sk-AAAAAAAAAAAAAAAAAAAAAAAAA","b":[{"type":"image","data":"sk-BBBBBBBBBBBBBBBBBBBBBBBBB"}]})");
  r.redact_json(j);
  EXPECT_EQ(j["a"], "[REDACTED:email:1]");
  EXPECT_EQ(j["encrypted_content"], "sk-AAAAAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_EQ(j["b"][0]["data"], "sk-BBBBBBBBBBBBBBBBBBBBBBBBB");
}

TEST(Identifiers, FindsEachKindWithItsValue) {
  Node n;
  n.role = "assistant";
  n.content = Json::array({Json{{"type", "text"}, {"text", "Edited lib/foo/bar.ex in 150 ms, see https://example.com/x"}},
                           Json{{"type", "tool_use"}, {"id", "toolu_1"}, {"name", "Bash"},
                                {"input", {{"command", "mix   test\n test/a_test.exs"}}}}});
  std::set<std::pair<std::string, std::string>> got;
  node_identifiers(n, [&](const char* k, std::string v) { got.emplace(k, v); });
  EXPECT_TRUE(got.count({"path", "lib/foo/bar.ex"}));
  EXPECT_TRUE(got.count({"number", "150 ms"}));
  EXPECT_TRUE(got.count({"url", "https://example.com/x"}));
  EXPECT_TRUE(got.count({"tool_call_id", "toolu_1"}));
  EXPECT_TRUE(got.count({"command", "mix test test/a_test.exs"}));
  EXPECT_TRUE(summary_keeps("changed bar.ex", ident::kPath, "lib/foo/bar.ex"));
  EXPECT_FALSE(summary_keeps("changed baz.ex", ident::kPath, "lib/foo/bar.ex"));
  EXPECT_TRUE(summary_keeps("took 150ms", ident::kNumber, "150 ms"));
}

TEST(Usage, NormalizesEachProvider) {
  UsageTokens c = normalize_usage("claude-code", Json::parse(R"({"input_tokens":10,"cache_creation_input_tokens":100,
      "cache_read_input_tokens":1000,"output_tokens":5,"cache_creation":{"ephemeral_5m_input_tokens":60,"ephemeral_1h_input_tokens":40}})"));
  EXPECT_EQ(c.input, 10);
  EXPECT_EQ(c.cache_write_5m, 60);
  EXPECT_EQ(c.cache_write_1h, 40);
  EXPECT_EQ(c.cache_read, 1000);
  EXPECT_EQ(c.total(), 1115);
  UsageTokens x = normalize_usage("codex", Json::parse(R"({"input_tokens":17088,"cached_input_tokens":3456,"output_tokens":350,"reasoning_output_tokens":152})"));
  EXPECT_EQ(x.input, 17088 - 3456);
  EXPECT_EQ(x.cache_read, 3456);
  EXPECT_EQ(x.output, 350);
  UsageTokens g = normalize_usage("gemini", Json::parse(R"({"input":15493,"output":32,"cached":8153,"thoughts":537,"tool":0})"));
  EXPECT_EQ(g.input, 15493 - 8153);
  EXPECT_EQ(g.output, 32 + 537);
  // OpenAI chat-completions usage; through LiteLLM (OpenHands) prompt_tokens also holds the
  // cache reads and writes: the total is total_tokens either way.
  UsageTokens o = normalize_usage("openai", Json::parse(R"({"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,
      "prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":4}})"));
  EXPECT_EQ(o.input, 60);
  EXPECT_EQ(o.cache_read, 40);
  EXPECT_EQ(o.output, 10);
  EXPECT_EQ(o.reasoning, 4);
  EXPECT_EQ(o.total(), 110);
  UsageTokens l = normalize_usage("openhands", Json::parse(R"({"completion_tokens":177,"prompt_tokens":4646,"total_tokens":4823,
      "completion_tokens_details":null,"prompt_tokens_details":{"audio_tokens":null,"cached_tokens":3482},
      "cache_creation_input_tokens":1158,"cache_read_input_tokens":3482})"));
  EXPECT_EQ(l.input, 6);
  EXPECT_EQ(l.cache_read, 3482);
  EXPECT_EQ(l.cache_write_5m, 1158);
  EXPECT_EQ(l.total(), 4823);
}

TEST(Prices, MatchCostAndUnknown) {
  PriceTable t = builtin_price_table();
  ASSERT_NE(t.find("claude-haiku-4-5-20251001"), nullptr);
  EXPECT_EQ(t.find("claude-haiku-4-5-20251001")->model, "claude-haiku-4-5");
  EXPECT_EQ(t.find("gpt-unknown"), nullptr);
  for (const auto& p : t.prices) {
    EXPECT_FALSE(p.source.empty());
    EXPECT_FALSE(p.date.empty());
  }
  UsageTokens u;
  u.input = 1000000;
  u.output = 1;
  const Price* p = t.find("claude-opus-4-6");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(cost_micro(u, *p), 5000000 + 25);  // $5/MTok input, one output token at $25/MTok
  EXPECT_THROW(parse_price_table(R"({"models":[{"model":"m","input":1.5}]})", "t"), Error);
}

}  // namespace
}  // namespace ctxfold
