// Issue 9: the hidden output per edit-tool result (hook output the model is sent but no file
// records), learned online from a session's own earlier measured requests, never from later ones.
#include <gtest/gtest.h>

#include <cmath>

#include "render/render.hpp"
#include "session_fixture.hpp"
#include "tokens/calibrate.hpp"
#include "tokens/estimate.hpp"
#include "tokens/hidden.hpp"
#include "forensics/request_table.hpp"

namespace ctxfold {
namespace {

TEST(HiddenPerEdit, LearnsTheResidualPerEditHalfWayAndNeverPredictsBelowZero) {
  HiddenPerEdit h;
  EXPECT_EQ(h.predict(3), 0);
  h.observe(1000, 400, 0);  // no edit results: nothing to attribute
  EXPECT_EQ(h.samples, 0);
  EXPECT_EQ(h.predict(1), 0);
  h.observe(1000, 400, 2);  // 300 per edit result, half way from 0
  EXPECT_DOUBLE_EQ(h.per_edit, 150.0);
  EXPECT_EQ(h.predict(2), 300);
  h.observe(1000, 400, 2);
  EXPECT_DOUBLE_EQ(h.per_edit, 225.0);
  // Over-counted steps (silent hooks) pull it below zero: nothing is added then.
  for (int i = 0; i < 4; ++i) h.observe(400, 1000, 1);
  EXPECT_LT(h.per_edit, 0.0);
  EXPECT_EQ(h.predict(5), 0);
  EXPECT_EQ(h.predict(0), 0);
}

TEST(HiddenPerEdit, CountsOnlyResultsOfEditToolCalls) {
  auto call = [](const std::string& id, const std::string& name) {
    return Json{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", Json::object()}};
  };
  auto result = [](const std::string& id) { return Json{{"type", "tool_result"}, {"tool_use_id", id}, {"content", "ok"}}; };
  std::vector<Node> items(4);
  items[0].content = Json::array({call("e1", "Edit"), call("b1", "Bash"), call("w1", "Write")});
  items[1].content = Json::array({result("e1"), result("b1")});
  items[2].content = Json::array({result("w1"), result("unknown")});
  items[3].content = Json::array({call("p1", "apply_patch"), result("p1")});  // Codex's edit tool: no hooks
  EXPECT_EQ(edit_results(items), (std::vector<std::int32_t>{0, 1, 1, 0}));
  EXPECT_EQ(count_between(edit_results(items), 0, 99), 2);
  EXPECT_TRUE(is_edit_tool("MultiEdit"));
  EXPECT_FALSE(is_edit_tool("edit"));
}

/// A Claude Code-like session: each step is the result of the previous call followed by a
/// response (one call, carrying usage). The provider's measurement is what ctxfold estimates for
/// the context plus a fixed unseen part plus `hidden` tokens per edit result sent so far.
class HiddenSessionTest : public SessionTest {
 protected:
  void SetUp() override {
    SessionTest::SetUp();
    user("u0", words(400));
  }
  std::int64_t estimate_now() {
    RenderOptions ro;
    return render_context(st(), "s", ro).estimated_tokens;
  }
  /// One step: the previous call's result (if any), sent with `hidden` tokens no record holds,
  /// then a response calling `tool`, measured as the estimate + 20000 + all hidden tokens so far.
  void step(const std::string& tool, std::int64_t hidden) {
    const std::string k = std::to_string(steps_);
    if (!pending_.empty()) {
      add("r" + k, role::kTool,
          Json::array({Json{{"type", "tool_result"}, {"tool_use_id", pending_}, {"content", words(1600)}}}));
      hidden_sent_ += hidden;
    }
    const std::int64_t measured = estimate_now() + 20000 + hidden_sent_;
    Node n;
    n.id = "a" + k;
    n.session = "s";
    n.predecessor = last_;
    n.role = role::kAssistant;
    pending_ = "call" + k;
    pending_edit_ = is_edit_tool(tool);
    n.content = Json::array({Json{{"type", "text"}, {"text", words(200)}},
                             Json{{"type", "tool_use"}, {"id", pending_}, {"name", tool}, {"input", {{"file_path", "x"}}}}});
    n.metadata = Json{{"source", {{"format", "claude-code"}}},
                      {"model", "claude-opus-4-6"},
                      {"message_id", "msg_" + k},
                      {"usage", {{"input_tokens", 3}, {"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", measured - 3}}}};
    Txn t(st().db());
    EXPECT_EQ(st().append(n), AppendResult::added);
    st().move_head("s", n.id, "append");
    t.commit();
    last_ = n.id;
    ++steps_;
  }
  int steps_ = 0;
  std::int64_t hidden_sent_ = 0;
  std::string pending_;
  bool pending_edit_ = false;
};

TEST_F(HiddenSessionTest, HiddenOutputPerEditIsLearnedFromEarlierRequestsOnly) {
  for (int i = 0; i < 6; ++i) step("Edit", 300);
  RequestTable t = request_table(st(), "s", 1);
  ASSERT_EQ(t.pairs.size(), 5u);
  double learned = 0;
  for (std::size_t k = 0; k < t.pairs.size(); ++k) {
    const GrowthPair& p = t.pairs[k];
    EXPECT_EQ(p.edits, 1) << k;
    // The plain calibration misses exactly the hidden 300 of the new edit result.
    EXPECT_EQ(p.measured - p.remainder, 300) << k;
    // The first pair has nothing earlier to learn from; each later one uses what the pairs before taught.
    EXPECT_EQ(p.hidden, std::llround(learned)) << k;
    EXPECT_EQ(p.calibrated, p.remainder + p.hidden) << k;
    learned += HiddenPerEdit::kAlpha * (300 - learned);
  }
  EXPECT_EQ(t.pairs[0].hidden, 0);
  EXPECT_GT(t.pairs[4].hidden, 250);
  EXPECT_LT(std::abs(t.pairs[4].calibrated - t.pairs[4].measured), std::abs(t.pairs[4].remainder - t.pairs[4].measured));

  // Look-ahead check: later requests measuring a very different hidden part change nothing of the
  // earlier pairs' predictions.
  for (int i = 0; i < 3; ++i) step("Edit", 5000);
  RequestTable t2 = request_table(st(), "s", 1);
  ASSERT_EQ(t2.pairs.size(), 8u);
  for (std::size_t k = 0; k < t.pairs.size(); ++k) {
    EXPECT_EQ(t2.pairs[k].hidden, t.pairs[k].hidden) << k;
    EXPECT_EQ(t2.pairs[k].calibrated, t.pairs[k].calibrated) << k;
  }
}

TEST_F(HiddenSessionTest, SilentHooksAndNonEditToolsAddNothing) {
  // Bash results carry hidden output here, but only edit results are attributed; Edits whose
  // hooks are silent leave no residual.
  step("Bash", 0);
  for (int i = 0; i < 3; ++i) step("Bash", 300);
  step("Edit", 300);  // the last Bash result
  for (int i = 0; i < 3; ++i) step("Edit", 0);
  RequestTable t = request_table(st(), "s", 1);
  ASSERT_EQ(t.pairs.size(), 7u);
  for (const auto& p : t.pairs) {
    EXPECT_EQ(p.hidden, 0);
    EXPECT_EQ(p.calibrated, p.remainder);
  }
}

TEST_F(HiddenSessionTest, RenderedFigureAddsTheLearnedHiddenOutputOfEditsSinceTheLatestRequest) {
  for (int i = 0; i < 5; ++i) step("Edit", 300);
  // The last response's Edit result arrives; no request has measured it yet.
  add("r_last", role::kTool, Json::array({Json{{"type", "tool_result"}, {"tool_use_id", pending_}, {"content", words(1600)}}}));
  RenderOptions ro;
  Rendered r = render_context(st(), "s", ro);
  ASSERT_EQ(r.tokens.kind, "calibrated");
  ASSERT_TRUE(r.tokens.calibration);
  const Calibration& c = *r.tokens.calibration;
  EXPECT_EQ(c.node, "a4");
  EXPECT_EQ(c.hidden_edits, 1);
  double learned = 0;
  for (int i = 0; i < 4; ++i) learned += HiddenPerEdit::kAlpha * (300 - learned);  // four pairs taught
  EXPECT_NEAR(c.hidden_per_edit, learned, 1e-9);
  EXPECT_EQ(c.hidden, std::llround(learned));
  EXPECT_EQ(r.tokens.value, r.estimated_tokens + (c.measured - c.estimated) + c.hidden);
  // What the next request will measure: the estimate, the unseen part, and 300 per edit result.
  const std::int64_t next = r.estimated_tokens + 20000 + 300 * 5;
  EXPECT_LT(std::abs(r.tokens.value - next), 300 - 250);
  // The calibration survives its JSON form (compactions record it on their summaries).
  auto back = Calibration::from_json(c.to_json());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->hidden, c.hidden);
  EXPECT_EQ(calibrated_figure(r.estimated_tokens, back).value, r.tokens.value);
}

}  // namespace
}  // namespace ctxfold
