// rolling at scale (docs/strategies.md "Summarizer calls at scale"): the evicted history is
// summarized as a tree whose depth grows as a logarithm of the leaves and whose total input is
// linear in the history; the offline summarizer is never capped to a partial result; a cap set by
// the user yields one summary of a prefix and says what remains; --dry-run states the calls and
// input tokens first. New fields are read through the JSON every output shows.
#include <gtest/gtest.h>

#include <cmath>

#include "invariants/verify_compaction.hpp"
#include "render/render.hpp"
#include "strategies/rolling.hpp"
#include "summarize/extractive.hpp"
#include "tokens/estimate.hpp"
#include "session_fixture.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

/// A fake that costs nothing per call, as the extractive summarizer: kind "extractive".
class FreeFake : public FakeSummarizer {
 public:
  std::string kind() const override { return "extractive"; }
};

/// An answer of a fixed 400 bytes (about 100 tokens), whatever the input: a summary's size does
/// not grow with what it covers.
std::string fixed_answer(const SummaryRequest& r, int call) {
  std::string s = "summary " + std::to_string(call) + ": ";
  const std::string in = r.previous_summary + r.transcript;
  s += in.substr(0, 400 - s.size());
  return s;
}

class RollingTreeTest : public SessionTest {
 protected:
  void history(int pairs) {
    for (int i = 1; i <= pairs; ++i) {
      user("u" + std::to_string(i), words(1200));
      assistant("a" + std::to_string(i), words(1200));
    }
  }
  void expect_clean() {
    std::vector<std::string> ss{"s"};
    for (const Check& c : {check_summary_coverage(st(), ss), check_active_summary(st(), ss), check_compaction_log(st(), ss)}) {
      EXPECT_TRUE(c.ok) << c.id;
      for (const auto& v : c.violations) ADD_FAILURE() << c.id << ": " << v.message;
    }
  }
  RollingOptions options() {
    RollingOptions o;
    o.env = &testing_env::shared_environment();
    o.window = 20000;
    return o;
  }
  struct Measured {
    CompactResult res;
    std::size_t calls = 0, merges = 0;
    std::size_t input_bytes = 0;
    Json tree;
  };
  /// Compacts `pairs` user/assistant pairs with a free fake of a 4000-token window (chunks of
  /// 2000 tokens less the prompt) and counts calls and input bytes.
  Measured run(int pairs) {
    history(pairs);
    FreeFake f;
    f.window = 4000;
    f.fn = fixed_answer;
    Measured m;
    m.res = compact_rolling(st(), "s", f, options());
    m.calls = f.requests.size();
    for (const auto& r : f.requests) {
      m.input_bytes += r.previous_summary.size() + r.transcript.size();
      if (r.transcript.empty()) ++m.merges;
    }
    if (m.res.summary_id)
      if (auto s = st().node(*m.res.summary_id)) m.tree = s->metadata["provenance"].value("tree", Json());
    return m;
  }
};

TEST_F(RollingTreeTest, DepthGrowsAsALogarithmAndInputIsLinearInTheHistory) {
  // 120 pairs of ~300-token messages: ~72k tokens, ~60 leaves of ~1200 tokens.
  Measured m = run(120);
  ASSERT_EQ(m.res.status, "compacted") << m.res.reason;
  EXPECT_FALSE(m.res.partial) << m.res.reason;
  ASSERT_TRUE(m.tree.is_object()) << "provenance.tree records the tree's shape";
  const std::int64_t leaves = m.tree.value("leaves", 0);
  const std::int64_t depth = m.tree.value("depth", 0);
  EXPECT_EQ(static_cast<std::size_t>(leaves) + m.merges, m.calls);
  EXPECT_GT(leaves, 20);
  // Each merge takes as many ~100-token summaries as fit a chunk (>= 10 here): depth is
  // 1 + ceil(log_10(leaves)) at most, far below the leaves a carried summary passes through.
  EXPECT_LE(depth, 1 + static_cast<std::int64_t>(std::ceil(std::log(static_cast<double>(leaves)) / std::log(10.0))));
  EXPECT_GE(depth, 2);
  EXPECT_LT(m.merges * 5, static_cast<std::size_t>(leaves));
  // Linear: the evicted text once, plus the merged summaries (a small fraction of it).
  std::size_t evicted_bytes = 0;
  const Node summary = *st().node(*m.res.summary_id);
  for (const auto& id : summary.covers_ids)
    if (auto n = st().node(id)) evicted_bytes += node_text(*n).size();
  EXPECT_LE(m.input_bytes, evicted_bytes + evicted_bytes / 4) << "summarizer input " << m.input_bytes;
  EXPECT_EQ(m.tree.value("input_tokens", std::int64_t(0)) > 0, true);
  expect_clean();
}

TEST_F(RollingTreeTest, FourTimesTheHistoryIsAboutFourTimesTheInputAndOneLevelMore) {
  Measured small = run(40);
  ASSERT_EQ(small.res.status, "compacted") << small.res.reason;
  TearDown();
  SetUp();
  last_.clear();
  Measured large = run(160);
  ASSERT_EQ(large.res.status, "compacted") << large.res.reason;
  EXPECT_FALSE(large.res.partial) << large.res.reason;
  const double ratio = static_cast<double>(large.input_bytes) / static_cast<double>(small.input_bytes);
  EXPECT_GT(ratio, 3.0);
  EXPECT_LT(ratio, 5.0) << "input grows linearly with the history";
  ASSERT_TRUE(large.tree.is_object());
  ASSERT_TRUE(small.tree.is_object());
  EXPECT_LE(large.tree.value("depth", 0), small.tree.value("depth", 0) + 1);
  expect_clean();
}

TEST_F(RollingTreeTest, TheExtractiveSummarizerIsNotCappedToAPartialResult) {
  // More chunks than the old fixed cap of 64 calls: 200 pairs in ~1200-token chunks.
  history(200);
  ExtractiveSummarizer ex(4000);
  CompactResult res = compact_rolling(st(), "s", ex, options());
  ASSERT_EQ(res.status, "compacted") << res.reason;
  EXPECT_FALSE(res.partial) << res.reason;
  EXPECT_GT(res.calls, 64);
  EXPECT_TRUE(compact_to_json(res)["remaining"].is_null());
  expect_clean();
}

TEST_F(RollingTreeTest, ACapSetByTheUserCommitsOneSummaryOfAPrefixAndSaysWhatRemains) {
  history(120);
  FakeSummarizer f;  // costs per call: the cap applies
  f.window = 4000;
  f.fn = fixed_answer;
  RollingOptions o = options();
  o.max_calls = 12;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  EXPECT_TRUE(res.partial);
  EXPECT_LE(f.requests.size(), 12u);
  EXPECT_EQ(res.error_code, "summarizer.calls");
  // The cap was spent knowing the merges: the leaves it made are merged into the one summary.
  EXPECT_TRUE(f.requests.back().transcript.empty()) << "the last call merges: " << f.requests.size() << " calls, "
                                                    << res.reason;
  const Json j = compact_to_json(res);
  ASSERT_TRUE(j["remaining"].is_object()) << j.dump();
  EXPECT_GT(j["remaining"]["units"].get<std::int64_t>(), 0);
  EXPECT_GT(j["remaining"]["tokens"].get<std::int64_t>(), 0);
  expect_clean();
  // The next run continues from there.
  FakeSummarizer g;
  g.window = 4000;
  g.fn = fixed_answer;
  o.max_calls = 1000;
  CompactResult again = compact_rolling(st(), "s", g, o);
  EXPECT_EQ(again.status, "compacted") << again.reason;
  EXPECT_FALSE(again.partial) << again.reason;
  expect_clean();
}

TEST_F(RollingTreeTest, DryRunStatesTheCallsAndInputTokensBeforeSpendingAny) {
  history(120);
  FreeFake f;
  f.window = 4000;
  f.fn = fixed_answer;
  RollingOptions o = options();
  o.dry_run = true;
  CompactResult plan = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(plan.status, "planned") << plan.reason;
  EXPECT_TRUE(f.requests.empty());
  const Json p = compact_to_json(plan)["plan"];
  ASSERT_TRUE(p.contains("summarizer")) << p.dump();
  const Json& s = p["summarizer"];
  EXPECT_TRUE(s["within_cap"].get<bool>());
  EXPECT_TRUE(s["call_cap"].is_null());
  o.dry_run = false;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  std::int64_t leaves = 0, input = 0;
  for (const auto& r : f.requests) {
    if (!r.transcript.empty()) ++leaves;
    input += r.input_tokens;
  }
  EXPECT_EQ(s["leaf_calls"].get<std::int64_t>(), leaves) << "leaves are planned exactly";
  EXPECT_GE(s["calls"].get<std::int64_t>(), static_cast<std::int64_t>(f.requests.size()));
  EXPECT_GE(s["input_tokens"].get<std::int64_t>(), input) << "merge levels are planned at the output limit";
}

}  // namespace
}  // namespace ctxfold
