// replay re-plans a rolling compaction from the ledger (strategies/replay.hpp replay_summary,
// strategies/rolling.hpp replan_rolling), including a re-compaction pass of the head checkpoint.
#include <gtest/gtest.h>

#include "session_fixture.hpp"
#include "strategies/rolling.hpp"
#include "strategies/replay.hpp"
#include "util/error.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

class ReplayReplanTest : public SessionTest {};

TEST_F(ReplayReplanTest, BothPassesOfATwoPassCompactionReplan) {
  for (int i = 0; i < 40; ++i) user("u" + std::to_string(i), words(4000, static_cast<char>('a' + i % 26)));
  auto fake = std::make_unique<FakeSummarizer>();
  // The first pass answers long (12k tokens: the compacted request is still over the trigger),
  // the re-compaction of the head checkpoint (half the output budget) answers short.
  fake->fn = [](const SummaryRequest& req, int) {
    return req.max_output_tokens >= 8000 ? words(48000, 's') : std::string("## User requests\n- short");
  };
  auto rec = make_recording_summarizer(st(), "s", std::move(fake));
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 20000;
  o.max_output_tokens = 8000;
  CompactResult r = compact_rolling(st(), "s", *rec, o);
  ASSERT_EQ(r.status, "compacted") << r.reason;
  ASSERT_EQ(r.passes, 2) << r.reason;
  std::vector<std::string> summaries;
  for (const auto& e : st().events("s", "compact/end"))
    if (json_str(e.payload, "status") == "compacted") summaries.push_back(json_str(e.payload, "summary_id"));
  ASSERT_EQ(summaries.size(), 2u);
  ReplayResult first = replay_summary(st(), summaries[0]);
  EXPECT_TRUE(first.replanned);
  EXPECT_EQ(first.replan_pass, "first");
  EXPECT_TRUE(first.identical);
  ReplayResult second = replay_summary(st(), summaries[1]);
  EXPECT_TRUE(second.replanned);
  EXPECT_EQ(second.replan_pass, "recompaction");
  EXPECT_TRUE(second.identical);
  EXPECT_EQ(second.reproduced, second.stored);
}

TEST_F(ReplayReplanTest, AChangedParameterIsRefusedWithTheReason) {
  for (int i = 0; i < 20; ++i) user("u" + std::to_string(i), words(4000, static_cast<char>('a' + i % 26)));
  auto fake = std::make_unique<FakeSummarizer>();
  fake->fn = [](const SummaryRequest&, int) { return std::string("## User requests\n- short"); };
  auto rec = make_recording_summarizer(st(), "s", std::move(fake));
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 20000;
  CompactResult r = compact_rolling(st(), "s", *rec, o);
  ASSERT_EQ(r.status, "compacted") << r.reason;
  Node s = *st().node(*r.summary_id);
  // The re-plan of the stored node, with its recorded parameters, matches...
  class Answers : public Summarizer {
   public:
    explicit Answers(std::vector<Json> calls) : calls_(std::move(calls)) {}
    std::string kind() const override { return "test"; }
    std::string model() const override { return "test"; }
    std::int64_t window_tokens() const override { return 128000; }
    SummaryResult summarize(const SummaryRequest& req) override {
      for (const auto& c : calls_)
        if (json_str(c, "request_digest") == request_digest(req)) return SummaryResult{json_str(c["response"], "text"), "test", Json::object()};
      throw Error(Exit::environment, "replay.unrecorded", "not recorded");
    }

   private:
    std::vector<Json> calls_;
  };
  std::vector<Json> calls;
  for (const auto& e : st().events("s", kSummarizerCallEvent)) calls.push_back(e.payload);
  std::int64_t boundary = 0;
  for (const auto& e : st().events("s", "compact/start")) boundary = e.payload["boundary_seq"].get<std::int64_t>();
  Answers answers(calls);
  std::string why;
  auto ok = replan_rolling(st(), s, boundary, answers, why);
  ASSERT_TRUE(ok) << why;
  EXPECT_EQ(ok->covers_ids, s.covers_ids);
  // ...and with another tail share it selects another range, whose requests were never recorded.
  Node changed = s;
  changed.metadata["provenance"]["parameters"]["tail_percent"] = 60;
  auto bad = replan_rolling(st(), changed, boundary, answers, why);
  EXPECT_FALSE(bad);
  EXPECT_NE(why.find("not recorded"), std::string::npos) << why;
}

}  // namespace
}  // namespace ctxfold
