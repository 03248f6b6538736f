// Issue 9's bad-input list for measured usage (missing, zero, reset by a compaction, a model
// switch: skipped and counted, never divided by) and the harness-injection rules of the estimator.
#include <gtest/gtest.h>

#include "session_fixture.hpp"
#include "tokens/calibrate.hpp"
#include "tokens/estimate.hpp"
#include "forensics/request_table.hpp"

namespace ctxfold {
namespace {

TEST(MeasuredUsage, MissingZeroAndNonNumericUsageIsNotAMeasurement) {
  EXPECT_FALSE(measured_input_tokens(Json()));
  EXPECT_FALSE(measured_input_tokens(Json::object()));
  EXPECT_FALSE(measured_input_tokens(Json{{"output_tokens", 12}}));
  EXPECT_FALSE(measured_input_tokens(Json{{"input_tokens", 0}, {"cache_read_input_tokens", 0},
                                          {"cache_creation_input_tokens", 0}}));
  EXPECT_FALSE(measured_input_tokens(Json{{"input_tokens", "1000"}}));
  EXPECT_FALSE(measured_input_tokens(Json{{"input_tokens", -5}}));
  EXPECT_FALSE(measured_input_tokens(Json{{"input_tokens", nullptr}, {"cache_read_input_tokens", nullptr}}));
  // Anthropic: the three disjoint fields add up; OpenAI / Codex and Gemini CLI read their own.
  EXPECT_EQ(measured_input_tokens(Json{{"input_tokens", 3}, {"cache_creation_input_tokens", 1484},
                                       {"cache_read_input_tokens", 103061}}),
            104548);
  EXPECT_EQ(measured_input_tokens(Json{{"input_tokens", 900}, {"cached_input_tokens", 800}}), 900);
  EXPECT_EQ(measured_input_tokens(Json{{"prompt_tokens", 77}}), 77);
  EXPECT_EQ(measured_input_tokens(Json{{"input", 55}, {"output", 3}}), 55);
}

TEST(MeasuredUsage, CalibrationWithAZeroEstimateIsNeverDividedBy) {
  Calibration c{"n", 500, 0, "request", kEstimatorVersion};
  TokenFigure f = calibrated_figure(100, c);
  EXPECT_EQ(f.kind, "calibrated");
  EXPECT_EQ(f.value, 600);  // the remainder is carried, no ratio
  // A stored calibration with a zero or missing measurement is refused.
  EXPECT_FALSE(Calibration::from_json(Json{{"node", "n"}, {"measured", 0}, {"estimated", 10},
                                           {"estimator", kEstimatorVersion}}));
  EXPECT_FALSE(Calibration::from_json(Json{{"node", "n"}, {"estimated", 10}, {"estimator", kEstimatorVersion}}));
}

class RequestTableTest : public SessionTest {
 protected:
  /// An assistant response carrying `usage` (null: none) from `model`.
  void response(const std::string& id, Json usage, const std::string& model = "claude-opus-4-6") {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = last_;
    n.role = role::kAssistant;
    n.content = Json::array({Json{{"type", "text"}, {"text", "done " + id}}});
    n.metadata = Json{{"source", {{"format", "claude-code"}}}, {"model", model}, {"message_id", "msg_" + id}};
    if (!usage.is_null()) n.metadata["usage"] = usage;
    Txn t(st().db());
    ASSERT_EQ(st().append(n), AppendResult::added);
    st().move_head("s", id, "append");
    t.commit();
    last_ = id;
  }
  static Json usage(std::int64_t read) {
    return Json{{"input_tokens", 0}, {"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", read}};
  }
};

TEST_F(RequestTableTest, MissingZeroResetSwitchAndSmallGrowthAreSkippedAndCounted) {
  user("u1", words(400));
  response("a1", usage(1000));
  user("u2", words(4000));
  response("a2", Json());  // no usage at all
  user("u3", words(400));
  response("a3", usage(0));  // zero usage (Codex writes it around a compaction)
  user("u4", words(400));
  response("a4", usage(5000));
  user("u5", words(400));
  response("a5", usage(3000));  // measured shrank: a compaction reset the context
  user("u6", words(400));
  response("a6", usage(6000), "claude-haiku-4-5-20251001");  // model switch
  user("u7", words(40));
  response("a7", usage(6100), "claude-haiku-4-5-20251001");  // growth 100 < 200
  user("u8", words(4000));
  response("a8", usage(7200), "claude-haiku-4-5-20251001");

  RequestTable t = request_table(st(), "s", 200);
  ASSERT_EQ(t.requests.size(), 6u);
  EXPECT_EQ(t.requests[0].node, "a1");
  EXPECT_EQ(t.requests[1].node, "a4");
  EXPECT_EQ(t.skipped_no_usage, 2);
  EXPECT_EQ(t.skipped_reset, 1);
  EXPECT_EQ(t.skipped_model_switch, 1);
  EXPECT_EQ(t.skipped_small, 1);
  ASSERT_EQ(t.pairs.size(), 2u);
  EXPECT_EQ(t.requests[t.pairs[0].from].node, "a1");
  EXPECT_EQ(t.requests[t.pairs[0].to].node, "a4");
  EXPECT_EQ(t.pairs[0].measured, 4000);
  EXPECT_EQ(t.requests[t.pairs[1].to].node, "a8");
  // Every relative error is finite: nothing was divided by a zero measurement.
  Json j = request_table_json(t, 200, TokenFigure{});
  for (const auto& p : j["pairs"]) EXPECT_TRUE(std::isfinite(p["calibrated_error"].get<double>()));
  EXPECT_EQ(j["summary"]["pairs"], 2);
}

// Claude Code's isMeta records (hook output, caveats) are sent inside the agent's turn: they do not
// open a user turn, so earlier thinking is not "an earlier turn's" because of them.
TEST(HarnessRules, MetaUserRecordsDoNotOpenATurn) {
  Node n;
  n.role = role::kUser;
  n.content = Json::array({Json{{"type", "text"}, {"text", "<system-reminder>\nhook output\n</system-reminder>"}}});
  EXPECT_TRUE(starts_user_turn(n));
  n.metadata["is_meta"] = true;
  EXPECT_FALSE(starts_user_turn(n));
}

// A call a PreToolUse hook blocked: Claude Code sends the hook's stderr as the tool_result and again
// as a <system-reminder> naming the hook and command; the estimate counts both for Anthropic.
TEST(HarnessRules, HookBlockedCallCountsTheReminderOnce) {
  Node n;
  n.id = "r";
  n.role = role::kTool;
  const std::string err = "Pre-commit validation failed:\n\n[FORMAT] Code is not formatted.";
  n.content = Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", err}, {"is_error", true}}});
  n.metadata = Json{{"source", {{"format", "claude-code"}}}};
  const std::int64_t plain = estimate_node_tokens(n);
  EXPECT_EQ(hook_reminder_tokens(n), 0);
  n.metadata["hook_blocked"] = Json::array({Json{{"tool_use_id", "toolu_1"},
                                                 {"hook", "PreToolUse:Bash"},
                                                 {"commands", {"a.sh", "${CLAUDE_PLUGIN_ROOT}/scripts/pre-commit.sh"}}}});
  const std::int64_t reminder =
      kAnthropicFraming.block +
      estimate_text_tokens("<system-reminder>\nPreToolUse:Bash hook blocking error from command: \""
                           "${CLAUDE_PLUGIN_ROOT}/scripts/pre-commit.sh\": ") +
      estimate_text_tokens("\n</system-reminder>") + estimate_text_tokens(err);
  EXPECT_EQ(hook_reminder_tokens(n), reminder);
  EXPECT_EQ(estimate_node_tokens(n), plain + reminder);
  EXPECT_GT(reminder, estimate_text_tokens(err));
  // Another provider's framing never adds it; an entry naming no result of the node adds nothing.
  n.metadata["source"]["format"] = "codex";
  const std::int64_t codex = estimate_node_tokens(n);
  n.metadata.erase("hook_blocked");
  EXPECT_EQ(estimate_node_tokens(n), codex);
  n.metadata["source"]["format"] = "claude-code";
  n.metadata["hook_blocked"] = Json::array({Json{{"tool_use_id", "toolu_other"}, {"hook", "PreToolUse:Bash"}}});
  EXPECT_EQ(estimate_node_tokens(n), plain);
}

}  // namespace
}  // namespace ctxfold
