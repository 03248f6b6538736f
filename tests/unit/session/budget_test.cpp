// Request-local budgets (session/budget.hpp): the selection rules and the protected classes.
#include <gtest/gtest.h>

#include "session/budget.hpp"
#include "session_fixture.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

class BudgetTest : public SessionTest {
 protected:
  FakeSummarizer fake;
  BudgetCache cache;
  void SetUp() override {
    SessionTest::SetUp();
    fake.fn = [](const SummaryRequest& req, int call) {
      return "summary " + std::to_string(call) + " of " + std::to_string(req.transcript.size()) + " bytes";
    };
  }
  Rendered view() { return render_context(st(), "s", RenderOptions{}); }
  BudgetOptions opts(std::int64_t budget) {
    BudgetOptions o;
    o.budget = budget;
    o.max_output = 1000;
    return o;
  }
  /// A runaway turn: system, one user message, `steps` tool steps whose results are `bytes` long,
  /// then a latest step.
  void runaway(int steps, std::size_t bytes, bool latest = true) {
    add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", "You are a careful agent."}}}));
    user("u1", "fix the build and run the tests");
    for (int i = 0; i < steps; ++i) {
      std::string c = "c" + std::to_string(i);
      assistant("a" + std::to_string(i), "step " + std::to_string(i), {c});
      tool("t" + std::to_string(i), {c}, words(bytes, static_cast<char>('a' + i % 26)));
    }
    if (latest) {
      assistant("alast", "the latest step", {"clast"});
      tool("tlast", {"clast"}, words(2000, 'z'));
    }
  }
  static std::int64_t figure(const Rendered& r) { return calibrated_figure(r.estimated_tokens, r.tokens.calibration).value; }
};

/// Messages of `before` that `after` must hold unchanged: every user and system message, every
/// tool_use block, and the latest assistant segment.
void expect_protected_identical(const Rendered& before, const Rendered& after) {
  std::vector<std::string> users_before, users_after;
  for (const auto& m : before.messages)
    if (m.role == role::kUser || m.role == role::kSystem) users_before.push_back(dump_json(m.content));
  for (const auto& m : after.messages)
    if ((m.role == role::kUser || m.role == role::kSystem) && m.kind != "checkpoint") users_after.push_back(dump_json(m.content));
  EXPECT_EQ(users_before, users_after);
  // Every tool call left in the request is byte-identical to the original one with its id.
  std::map<std::string, std::string> calls;
  for (const auto& m : before.messages)
    for (const auto& b : m.content)
      if (json_str(b, "type") == "tool_use") calls[json_str(b, "id")] = dump_json(b);
  std::map<std::string, bool> results_error;
  for (const auto& m : before.messages)
    for (const auto& b : m.content)
      if (json_str(b, "type") == "tool_result") results_error[json_str(b, "tool_use_id")] = b.value("is_error", false);
  std::set<std::string> called, answered;
  for (const auto& m : after.messages)
    for (const auto& b : m.content) {
      if (json_str(b, "type") == "tool_use") {
        ASSERT_TRUE(calls.count(json_str(b, "id")));
        EXPECT_EQ(calls[json_str(b, "id")], dump_json(b));
        called.insert(json_str(b, "id"));
      }
      if (json_str(b, "type") == "tool_result") {
        ASSERT_TRUE(results_error.count(json_str(b, "tool_use_id")));
        EXPECT_EQ(results_error[json_str(b, "tool_use_id")], b.value("is_error", false)) << json_str(b, "tool_use_id");
        answered.insert(json_str(b, "tool_use_id"));
      }
    }
  EXPECT_EQ(called, answered);  // no orphan pairs
  // The latest assistant segment: the last assistant message and what follows it.
  auto tail = [](const Rendered& r) {
    std::vector<std::string> out;
    std::size_t last = 0;
    for (std::size_t i = 0; i < r.messages.size(); ++i)
      if (r.messages[i].role == role::kAssistant) last = i;
    for (std::size_t i = last; i < r.messages.size(); ++i) out.push_back(dump_json(r.messages[i].content));
    return out;
  };
  EXPECT_EQ(tail(before), tail(after));
}

TEST(BudgetCap, SmallestOfModelReserveAndQuarter) {
  // Smallest of the model's output capability, 16,384 and a quarter of the window.
  EXPECT_EQ(resolve_output_cap(200000, std::nullopt, "claude-opus-4-1").tokens, kStandardOutputReserve);
  EXPECT_EQ(resolve_output_cap(200000, std::nullopt, "claude-opus-4-1").source, "reserve");
  EXPECT_EQ(resolve_output_cap(40000, std::nullopt, "claude-opus-4-1").tokens, 10000);
  EXPECT_EQ(resolve_output_cap(40000, std::nullopt, "").source, "quarter");
  EXPECT_EQ(resolve_output_cap(128000, std::nullopt, "deepseek-chat").tokens, 8192);
  EXPECT_EQ(resolve_output_cap(128000, std::nullopt, "deepseek-chat").source, "model");
  EXPECT_EQ(resolve_output_cap(100000, std::nullopt, "unknown-model").tokens, kStandardOutputReserve);
  // An explicit cap is kept unchanged, even above the rule.
  EXPECT_EQ(resolve_output_cap(40000, 30000, "deepseek-chat").tokens, 30000);
  EXPECT_EQ(resolve_output_cap(40000, 30000, "").source, "flag");
  EXPECT_THROW(resolve_output_cap(0, std::nullopt, ""), Error);
  EXPECT_THROW(resolve_output_cap(1000, 0, ""), Error);
}

TEST_F(BudgetTest, UnderBudgetChangesNothingAndCallsNothing) {
  runaway(3, 2000);
  Rendered before = view(), r = view();
  BudgetReport rep = apply_budget(r, fake, opts(1000000), cache);
  EXPECT_EQ(rep.calls, 0);
  EXPECT_FALSE(rep.changed());
  EXPECT_EQ(dump_json(render_to_json(before, RenderFormat::anthropic)), dump_json(render_to_json(r, RenderFormat::anthropic)));
  EXPECT_TRUE(fake.requests.empty());
}

TEST_F(BudgetTest, ToolResultSummariesFirstKeepIdsFlagsAndCalls) {
  runaway(6, 8000);
  Rendered before = view(), r = view();
  // Enough room that summarizing a few results fits: step 3 is not needed.
  const std::int64_t budget = figure(before) + 1000 + budget_margin(figure(before)) - 3000;
  BudgetReport rep = apply_budget(r, fake, opts(budget), cache);
  EXPECT_FALSE(rep.results_summarized.empty());
  EXPECT_TRUE(rep.checkpoints.empty());
  EXPECT_LE(rep.tokens_after, rep.input_budget);
  EXPECT_EQ(rep.tokens_after, figure(r));
  EXPECT_LT(rep.tokens_after, rep.tokens_before);
  EXPECT_EQ(rep.calls, static_cast<int>(fake.requests.size()));
  expect_protected_identical(before, r);
  // The summarized result names its node and keeps its id.
  bool seen = false;
  for (const auto& m : r.messages)
    for (const auto& b : m.content)
      if (json_str(b, "tool_use_id") == rep.results_summarized.front()) {
        EXPECT_NE(json_str(b, "content").find("[ctxfold: tool result summarized for this request only"), std::string::npos);
        seen = true;
      }
  EXPECT_TRUE(seen);
  // The latest step's result is never summarized.
  EXPECT_EQ(std::count(rep.results_summarized.begin(), rep.results_summarized.end(), "clast"), 0);
}

TEST_F(BudgetTest, CheckpointReplacesOldestCompleteStepsOnly) {
  runaway(40, 600);
  Rendered before = view(), r = view();
  BudgetOptions o = opts(figure(before) / 2);
  o.min_result_tokens = 1000000;  // no result qualifies for step 2: the checkpoint does it all
  o.checkpoint_summary_tokens = 200;  // the fake's answers are short
  BudgetReport rep = apply_budget(r, fake, o, cache);
  ASSERT_EQ(rep.checkpoints.size(), 1u);
  EXPECT_LE(rep.tokens_after, rep.input_budget);
  expect_protected_identical(before, r);
  // The checkpoint sits right after the user message and covers the oldest steps, from a0 on.
  ASSERT_GE(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[2].kind, "checkpoint");
  EXPECT_EQ(r.messages[2].ids.front(), "a0");
  // Only as much as needed: some steps stay verbatim before the latest one.
  EXPECT_GT(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[3].role, role::kAssistant);
}

TEST_F(BudgetTest, ProtectedClassesStayByteIdentical) {
  add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", "system"}}}));
  user("u1", "look at this");
  // An image result, a signed-reasoning step, an error result, then plain steps.
  assistant("a0", "screenshot", {"c0"});
  add("t0", role::kTool,
      Json::array({Json{{"type", "tool_result"},
                        {"tool_use_id", "c0"},
                        {"content", Json::array({Json{{"type", "text"}, {"text", words(6000)}},
                                                 Json{{"type", "image"}, {"media_type", "image/png"}, {"width", 100}, {"height", 100}}})},
                        {"is_error", false}}}));
  add("a1", role::kAssistant,
      Json::array({Json{{"type", "thinking"}, {"thinking", words(6000, 'q')}, {"signature", "sig"}},
                   Json{{"type", "tool_use"}, {"id", "c1"}, {"name", "Bash"}, {"input", {{"command", "make"}}}}}));
  tool("t1", {"c1"}, words(6000, 'm'));
  assistant("a2", "failing", {"c2"});
  add("t2", role::kTool,
      Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "c2"}, {"content", words(7000, 'e')}, {"is_error", true}}}));
  // An incomplete group: a call with no recorded result.
  assistant("a3", "lost", {"c3"});
  for (int i = 4; i < 14; ++i) {
    std::string c = "c" + std::to_string(i);
    assistant("a" + std::to_string(i), "step", {c});
    tool("t" + std::to_string(i), {c}, words(3000, 'p'));
  }
  user("u2", "and now the latest request");
  const Rendered before = view();
  auto message_with = [](const Rendered& x, const std::string& id) -> std::string {
    for (const auto& m : x.messages)
      if (std::find(m.ids.begin(), m.ids.end(), id) != m.ids.end() && m.kind != "checkpoint") return dump_json(m.content);
    return "";
  };
  // A gap result summaries can close (step 2 only), then one that needs a checkpoint (step 3).
  bool saw_checkpoint = false, saw_results_only = false;
  for (std::int64_t budget : {figure(before) - 2000, figure(before) * 2 / 3}) {
    SCOPED_TRACE(budget);
    Rendered r = view();
    BudgetCache fresh;
    BudgetReport rep = apply_budget(r, fake, opts(budget), fresh);
    EXPECT_LE(rep.tokens_after, rep.input_budget);
    EXPECT_TRUE(rep.changed());
    expect_protected_identical(before, r);
    // The image result, the signed reasoning and the incomplete group are untouched.
    EXPECT_EQ(message_with(before, "t0"), message_with(r, "t0"));
    EXPECT_EQ(message_with(before, "a1"), message_with(r, "a1"));
    EXPECT_EQ(message_with(before, "a3"), message_with(r, "a3"));
    // Groups with an image, signed reasoning or a missing result never enter a checkpoint.
    for (const auto& cp : rep.checkpoints)
      for (const char* id : {"a0", "t0", "a1", "t1", "a3"})
        EXPECT_EQ(std::count(cp["ids"].begin(), cp["ids"].end(), Json(id)), 0) << id;
    saw_checkpoint |= !rep.checkpoints.empty();
    if (rep.checkpoints.empty()) {
      saw_results_only = true;
      // Step 2 only: the error result is the largest eligible one, summarized first, and stays
      // an error (checked in expect_protected_identical).
      ASSERT_FALSE(rep.results_summarized.empty());
      EXPECT_EQ(rep.results_summarized.front(), "c2");
    }
  }
  EXPECT_TRUE(saw_checkpoint);
  EXPECT_TRUE(saw_results_only);
}

TEST_F(BudgetTest, AGapOnlyACheckpointClosesSpendsNoResultSummaryItAbsorbs) {
  runaway(80, 3000);
  Rendered r = view();
  BudgetReport rep = apply_budget(r, fake, opts(figure(r) / 4), cache);
  ASSERT_FALSE(rep.checkpoints.empty());
  EXPECT_LE(rep.tokens_after, rep.input_budget);
  std::set<std::string> covered;
  for (const auto& cp : rep.checkpoints)
    for (const auto& id : cp["ids"]) covered.insert(id.get<std::string>());
  for (const auto& c : rep.results_summarized)  // tool_use id cN is answered by node tN
    EXPECT_EQ(covered.count("t" + c.substr(1)), 0u) << c << " was summarized, then absorbed by the checkpoint";
  // The checkpoint's chunks are the only calls (one chunk at the default size).
  EXPECT_LE(rep.calls, 2);
}

TEST_F(BudgetTest, ProtectedContentOverBudgetFailsBeforeAnyCall) {
  add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", words(8000)}}}));
  user("u1", words(8000, 'u'));
  assistant("a0", "step", {"c0"});
  tool("t0", {"c0"}, words(20000));
  Rendered r = view();
  BudgetOptions o = opts(3000);
  try {
    apply_budget(r, fake, o, cache);
    FAIL() << "expected budget.protected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "budget.protected");
    EXPECT_EQ(e.exit(), Exit::environment);
    EXPECT_NE(std::string(e.what()).find("system prompt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the latest"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fake.requests.empty());
}

TEST_F(BudgetTest, IdenticalResultsAreSummarizedOnce) {
  add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", "system"}}}));
  user("u1", "poll the job");
  for (int i = 0; i < 6; ++i) {
    std::string c = "c" + std::to_string(i);
    assistant("a" + std::to_string(i), "poll", {c});
    tool("t" + std::to_string(i), {c}, words(8000, 'j'));  // the same output every time
  }
  assistant("alast", "latest", {"clast"});
  tool("tlast", {"clast"}, "done");
  Rendered before = view(), r = view();
  BudgetOptions o = opts(figure(before) * 3 / 4);
  BudgetReport rep = apply_budget(r, fake, o, cache);
  EXPECT_GE(rep.results_summarized.size(), 2u);
  // The result text differs only by its id line, so each result is a call; the cache answers the
  // same request a second time (a second preparation in the same invocation).
  const int calls = rep.calls;
  Rendered again = view();
  BudgetReport rep2 = apply_budget(again, fake, o, cache);
  EXPECT_EQ(rep2.calls, 0);
  EXPECT_EQ(rep2.cache_hits, calls);
  EXPECT_EQ(dump_json(render_to_json(r, RenderFormat::openai)), dump_json(render_to_json(again, RenderFormat::openai)));
}

TEST_F(BudgetTest, CallCapIsHonouredAndOverBudgetIsNeverReturned) {
  runaway(60, 4000);
  Rendered r = view();
  BudgetOptions o = opts(figure(r) / 4);
  o.max_calls = 2;
  o.chunk_tokens = 2000;  // many chunks: the cap binds
  try {
    apply_budget(r, fake, o, cache);
    FAIL() << "expected budget.over";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "budget.over");
    EXPECT_NE(std::string(e.what()).find("calls"), std::string::npos) << e.what();
  }
  EXPECT_LE(fake.requests.size(), 2u);
}

TEST_F(BudgetTest, DeadlineStopsCalls) {
  runaway(10, 4000);
  Rendered r = view();
  BudgetOptions o = opts(figure(r) / 2);
  o.deadline_ms = 0;
  try {
    apply_budget(r, fake, o, cache);
    FAIL() << "expected budget.over";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "budget.over");
    EXPECT_NE(std::string(e.what()).find("deadline"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fake.requests.empty());
}

TEST_F(BudgetTest, ContextOverflowRetriesWithSmallerChunks) {
  runaway(3, 40000);
  Rendered before = view(), r = view();
  std::size_t largest_ok = 0;
  fake.fn = [&](const SummaryRequest& req, int) -> std::string {
    if (req.transcript.size() > 12000) throw Error(Exit::environment, "summarizer.context_length", "too long");
    largest_ok = std::max(largest_ok, req.transcript.size());
    return "short";
  };
  BudgetOptions o = opts(figure(before) - 8000);
  o.chunk_tokens = 8000;  // ~32 KB pieces: the first call overflows, then 4000-token pieces pass
  BudgetReport rep = apply_budget(r, fake, o, cache);
  EXPECT_FALSE(rep.results_summarized.empty());
  EXPECT_LE(largest_ok, 12000u);
  EXPECT_GT(fake.requests.size(), rep.results_summarized.size());  // the overflowing request, then smaller ones
  expect_protected_identical(before, r);
}

TEST_F(BudgetTest, SummarizerFailureLeavesHistoryAndFails) {
  runaway(10, 4000);
  Rendered before = view(), r = view();
  fake.fn = [](const SummaryRequest&, int) -> std::string { throw Error(Exit::environment, "summarizer.http", "503"); };
  try {
    apply_budget(r, fake, opts(figure(before) / 2), cache);
    FAIL() << "expected budget.over";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "budget.over");
    EXPECT_NE(std::string(e.what()).find("summarizer.http"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fake.requests.size(), 1u);  // a failure that is not an overflow is not retried
}

}  // namespace
}  // namespace ctxfold
