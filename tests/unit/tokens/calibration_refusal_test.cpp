// A recorded measurement that disagrees with the local estimate of its context by more than
// kCalibrationFactor is not used, and the figure says why (docs/model.md "Measurements that are
// not used"). The checks read the figure's JSON, the form every output shows.
#include <gtest/gtest.h>

#include "render/render.hpp"
#include "tokens/calibrate.hpp"
#include "tokens/estimate.hpp"
#include "session_fixture.hpp"

namespace ctxfold {
namespace {

TEST(CalibrationRefusal, TenTokensAgainstMillionsIsNotUsed) {
  // The case: a recorded usage of 10 input tokens against an estimate of 17.8 M.
  Calibration c{"a9", 10, 17'800'000, "request", kEstimatorVersion};
  const Json f = calibrated_figure(17'800'000, c).to_json();
  EXPECT_EQ(f["kind"], "estimated");
  EXPECT_EQ(f["value"], 17'800'000);
  EXPECT_TRUE(f["calibration"].is_null());
  ASSERT_TRUE(f.contains("calibration_refused")) << f.dump();
  EXPECT_EQ(f["calibration_refused"]["node"], "a9");
  EXPECT_EQ(f["calibration_refused"]["measured"], 10);
  EXPECT_EQ(f["calibration_refused"]["estimated"], 17'800'000);
  EXPECT_NE(f["calibration_refused"]["reason"].get<std::string>().find("not used"), std::string::npos);
}

TEST(CalibrationRefusal, TheBoundsAreTheStatedFactor) {
  // Just inside the lower bound: measured * 4 == estimated is still used (scaled by the ratio).
  EXPECT_EQ(calibrated_figure(4000, Calibration{"n", 1000, 4000, "request", kEstimatorVersion}).to_json()["kind"],
            "calibrated");
  // Just outside it: refused.
  EXPECT_EQ(calibrated_figure(4001, Calibration{"n", 1000, 4001, "request", kEstimatorVersion}).to_json()["kind"],
            "estimated");
  // A harness's unseen system prompt and tools (26k over a 1k transcript) is a real remainder.
  const Json seen = calibrated_figure(1500, Calibration{"n", 27000, 1000, "request", kEstimatorVersion}).to_json();
  EXPECT_EQ(seen["kind"], "calibrated");
  EXPECT_EQ(seen["value"], 27500);
  EXPECT_FALSE(seen.contains("calibration_refused"));
  // A measurement far above the estimate is what the transcript lacks (a resumed context): used.
  EXPECT_EQ(calibrated_figure(2500, Calibration{"n", 169290, 2497, "request", kEstimatorVersion}).to_json()["kind"],
            "calibrated");
}

class CalibrationRefusalSession : public SessionTest {
 protected:
  void response(const std::string& id, std::int64_t input_tokens) {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = last_;
    n.role = role::kAssistant;
    n.content = Json::array({Json{{"type", "text"}, {"text", words(400)}}});
    n.metadata = Json{{"source", {{"format", "claude-code"}}},
                      {"model", "claude-opus-4-6"},
                      {"message_id", "msg_" + id},
                      {"usage", {{"input_tokens", input_tokens}, {"cache_creation_input_tokens", 0},
                                 {"cache_read_input_tokens", 0}}}};
    Txn t(st().db());
    ASSERT_EQ(st().append(n), AppendResult::added);
    st().move_head("s", id, "append");
    t.commit();
    last_ = id;
  }
};

TEST_F(CalibrationRefusalSession, ARenderAfterAnImplausibleRequestIsEstimatedAndSaysWhy) {
  user("u1", words(40000));  // about 10k tokens
  response("a1", 10);        // a usage of 10 input tokens for it
  user("u2", words(400));
  Rendered r = render_context(st(), "s", RenderOptions{});
  const Json f = r.tokens.to_json();
  EXPECT_EQ(f["kind"], "estimated") << f.dump();
  EXPECT_EQ(f["value"], r.estimated_tokens);
  ASSERT_TRUE(f.contains("calibration_refused")) << f.dump();
  EXPECT_EQ(f["calibration_refused"]["node"], "a1");
  EXPECT_EQ(f["calibration_refused"]["measured"], 10);
  bool warned = false;
  for (const auto& w : r.warnings) warned = warned || w.find("a1") != std::string::npos;
  EXPECT_TRUE(warned) << "a render warning names the refused node";
}

TEST_F(CalibrationRefusalSession, AnOlderPlausibleRequestDoesNotStandInForARefusedNewerOne) {
  user("u1", words(4000));
  response("a1", estimate_text_tokens(words(4000)) + 20000);  // plausible: 20k unseen
  user("u2", words(40000));
  const Json before = render_context(st(), "s", RenderOptions{}).tokens.to_json();
  EXPECT_EQ(before["kind"], "calibrated") << "a plausible request calibrates: " << before.dump();
  EXPECT_FALSE(before.contains("calibration_refused"));
  response("a2", 10);  // implausible, and the newest
  user("u3", words(400));
  const Json f = render_context(st(), "s", RenderOptions{}).tokens.to_json();
  EXPECT_EQ(f["kind"], "estimated") << f.dump();
  ASSERT_TRUE(f.contains("calibration_refused"));
  EXPECT_EQ(f["calibration_refused"]["node"], "a2");
}

}  // namespace
}  // namespace ctxfold
