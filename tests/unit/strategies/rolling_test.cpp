// The rolling strategy: units, retention, the compaction pipeline, faults, recap and invariants 3,
// 4 and 7. Regression tests are named after what they reproduce (docs/strategies.md "Hard
// cases").
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>

#include "invariants/verify_compaction.hpp"
#include "render/render.hpp"
#include "strategies/rolling.hpp"
#include "strategies/units.hpp"
#include "summarize/extractive.hpp"
#include "summarize/transcript.hpp"
#include "tokens/estimate.hpp"
#include "util/error.hpp"
#include "session_fixture.hpp"
#include "session/open.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class RollingTest : public SessionTest {
 protected:
  Rendered render() { return render_context(st(), "s", RenderOptions{}); }
  std::vector<std::string> reads() { return render().reads; }
  std::int64_t summaries() { return static_cast<std::int64_t>(st().view_nodes("s", kind::kSummary).size()); }
  void expect_clean() {
    std::vector<std::string> ss{"s"};
    for (const Check& c : {check_summary_coverage(st(), ss), check_active_summary(st(), ss), check_compaction_log(st(), ss)}) {
      EXPECT_TRUE(c.ok) << c.id;
      for (const auto& v : c.violations) ADD_FAILURE() << c.id << ": " << v.message;
    }
  }
  /// Every node of HEAD's spine appears once: raw in reads or inside the rendered summary.
  void expect_render_complete() {
    Rendered r = render();
    std::multiset<std::string> seen(r.reads.begin(), r.reads.end());
    if (r.summary) {
      auto s = st().node(*r.summary);
      for (const auto& id : s->covers_ids) seen.insert(id);
    }
    std::optional<std::string> cur = st().head("s");
    while (cur) {
      auto n = st().node(*cur, false);
      if (n->kind == kind::kMessage) EXPECT_EQ(seen.count(*cur), 1u) << *cur;
      cur = n->predecessor;
    }
  }

  FakeSummarizer halving() {
    FakeSummarizer f;
    f.fn = [](const SummaryRequest& r, int) {
      return "summary: " + (r.transcript + r.previous_summary).substr(0, (r.transcript.size() + r.previous_summary.size()) / 8);
    };
    return f;
  }

};

// ------------------------------------------------------------------ units

TEST_F(RollingTest, CutMovesToABalancedBoundaryAcrossTurns) {
  std::vector<Node> items;
  auto mk = [&](const std::string& id, const std::string& role, Json content) {
    Node n;
    n.id = id;
    n.role = role;
    n.content = std::move(content);
    items.push_back(n);
  };
  auto text = [](const std::string& t) { return Json::array({Json{{"type", "text"}, {"text", t}}}); };
  mk("u1", "user", text("a"));
  mk("a1", "assistant", text("b"));
  mk("u2", "user", text("c"));
  mk("a2", "assistant", text("d"));
  mk("u3", "user", text("e"));
  mk("a3", "assistant", Json::array({Json{{"type", "tool_use"}, {"id", "T1"}, {"name", "x"}, {"input", Json::object()}}}));
  mk("u4", "user", text("f"));
  mk("r4", "tool", Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "T1"}, {"content", "r"}}}));
  mk("a4", "assistant", text("g"));
  std::vector<bool> ok = balanced_cuts(items);
  EXPECT_TRUE(ok[5]);   // before a3
  EXPECT_FALSE(ok[6]);  // between the call and its result
  EXPECT_FALSE(ok[7]);
  EXPECT_TRUE(ok[8]);   // after the result
  auto units = split_units(items, 0);
  for (const auto& u : units) {
    auto g = pairing_gaps(items, 0, u.begin);
    EXPECT_TRUE(g.balanced()) << "cut before " << items[u.begin].id;
  }
  // a3, u4 and r4 form one unit.
  bool found = false;
  for (const auto& u : units)
    if (items[u.begin].id == "a3") {
      EXPECT_EQ(u.end, 8u);
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST_F(RollingTest, ParallelCallsStayWithTheirResults) {
  user("u1", words(400));
  assistant("a1", "three calls", {"P1", "P2", "P3"});
  tool("r1", {"P1", "P2", "P3"}, words(2000));
  user("u2", words(400));
  assistant("a2", words(400));
  Rendered r = render();
  auto units = split_units(r.items, 0);
  for (const auto& u : units) EXPECT_NE(r.items[u.begin].id, "r1");
  // Any compaction keeps the six together.
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1000;
  o.tail_percent = 10;
  o.trigger_percent = 50;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  auto rd = reads();
  bool call_in = std::count(rd.begin(), rd.end(), "a1") > 0, result_in = std::count(rd.begin(), rd.end(), "r1") > 0;
  EXPECT_EQ(call_in, result_in);
  expect_clean();
}

// ------------------------------------------------------------------ trigger and retention

TEST_F(RollingTest, NoWindowMeansNoopUnlessForced) {
  for (int i = 0; i < 6; ++i) {
    user("u" + std::to_string(i), words(800));
    assistant("a" + std::to_string(i), words(800));
  }
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "noop");
  EXPECT_EQ(summaries(), 0);
  EXPECT_TRUE(f.requests.empty());
  o.force = true;
  res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "compacted") << res.reason;
  EXPECT_EQ(summaries(), 1);
  expect_clean();
}

TEST_F(RollingTest, NoopChangesNothing) {
  user("u1", "hello");
  assistant("a1", "hi");
  Json before = render_to_json(render(), RenderFormat::ctxfold);
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 100000;
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "noop");
  EXPECT_EQ(dump_json(before), dump_json(render_to_json(render(), RenderFormat::ctxfold)));
  EXPECT_TRUE(st().events("s").empty());
}

TEST_F(RollingTest, TwoHundredNodesRenderSummaryPlusTail) {
  for (int i = 1; i <= 100; ++i) {
    user("u" + std::to_string(i), words(200));
    assistant("a" + std::to_string(i), words(200));
  }
  std::int64_t total = render().estimated_tokens;
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = total;  // 100% full
  o.tail_percent = 25;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  Rendered r = render();
  ASSERT_TRUE(r.summary);
  auto s = st().node(*r.summary);
  std::set<std::string> covered(s->covers_ids.begin(), s->covers_ids.end());
  for (const auto& id : r.reads) EXPECT_FALSE(covered.count(id)) << id << " is rendered and summarized";
  EXPECT_EQ(s->covers_ids.front(), "u1");
  EXPECT_EQ(r.items[1].role, role::kUser);  // the tail starts with a user message
  EXPECT_LT(res.estimated_tokens_after, res.estimated_tokens_before);
  EXPECT_EQ(st().head("s"), std::optional<std::string>("a100"));
  expect_render_complete();
  expect_clean();
}

TEST_F(RollingTest, CutAfterT2) {
  user("t1", words(1000));
  assistant("t2", words(1000));
  user("t3", words(400));
  assistant("t4", words(400));
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1000;
  o.trigger_percent = 50;
  o.tail_percent = 20;  // 200 tokens: t4 (104) + t3 (104) reach it
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  auto s = st().node(*res.summary_id);
  EXPECT_EQ(s->covers_ids, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(reads(), (std::vector<std::string>{*res.summary_id, "t3", "t4"}));
  EXPECT_EQ(s->predecessor, std::nullopt);
  expect_clean();
}

TEST_F(RollingTest, OpenStepIsNeverCompacted) {
  user("u1", words(400));
  assistant("a1", words(400), {"OPEN"});  // HEAD: no result yet
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 300;
  o.trigger_percent = 50;
  o.tail_percent = 10;
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_NE(res.status, "compacted");
  EXPECT_EQ(summaries(), 0);
  EXPECT_EQ(reads(), (std::vector<std::string>{"u1", "a1"}));
}

TEST_F(RollingTest, ClosedHistoryBeforeAnOpenStepCompactsAndTailStartsWithUser) {
  for (int i = 1; i <= 6; ++i) {
    user("u" + std::to_string(i), words(400));
    assistant("a" + std::to_string(i), words(400));
  }
  user("u7", words(100));
  assistant("a7", "running", {"OPEN"});
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1400;
  o.trigger_percent = 60;
  o.tail_percent = 5;  // the open step alone reaches it
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  Rendered r = render();
  ASSERT_GE(r.items.size(), 3u);
  EXPECT_EQ(r.items[0].kind, kind::kSummary);
  EXPECT_EQ(r.items[1].id, "u7");  // moved back from the step to its user message
  EXPECT_EQ(r.items.back().id, "a7");
  expect_clean();
}

// The first user message is kept (docs/strategies.md "Hard cases"), with a history long enough that
// the recap's recent messages would not reach the first one: the first user message is still quoted
// verbatim in the render.
TEST_F(RollingTest, TheFirstUserMessageIsKeptInTheRender) {
  user("u1", "THE TASK: port the importer to the new schema");
  assistant("a1", words(400));
  for (int i = 2; i <= 8; ++i) {
    user("u" + std::to_string(i), "follow-up " + std::to_string(i));
    assistant("a" + std::to_string(i), words(400));
  }
  user("u9", "run the tests");
  assistant("a9", "running", {"OPEN"});
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1400;
  o.trigger_percent = 60;
  o.tail_percent = 5;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  Rendered r = render();
  EXPECT_EQ(r.items.back().id, "a9");
  EXPECT_NE(r.items.front().role, role::kAssistant);
  bool quoted = false;
  for (const auto& s : r.sections)
    if (s.kind == "recap") quoted = !s.ids.empty() && s.ids.front() == "u1";
  EXPECT_TRUE(quoted);
  EXPECT_NE(render_to_text(r).find("THE TASK: port the importer to the new schema"), std::string::npos);
}

TEST_F(RollingTest, RunawayTurnIsCutBetweenSteps) {
  user("u1", "please fix every failing test in src/app.cpp");
  for (int i = 1; i <= 40; ++i) {
    assistant("a" + std::to_string(i), "step " + std::to_string(i), {"T" + std::to_string(i)});
    tool("r" + std::to_string(i), {"T" + std::to_string(i)}, words(400));
  }
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = render().estimated_tokens;
  o.tail_percent = 20;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  Rendered r = render();
  ASSERT_EQ(r.items[0].kind, kind::kSummary);
  EXPECT_EQ(r.items[1].role, role::kAssistant);  // cut inside the turn, at a step boundary
  auto s = st().node(*r.summary);
  EXPECT_EQ(s->covers_ids.front(), "u1");
  // The turn's request is quoted by the recap.
  auto recap = rolling_recap(st(), *s);
  ASSERT_TRUE(recap);
  EXPECT_EQ(recap->quoted_ids, std::vector<std::string>{"u1"});
  EXPECT_NE(node_text(recap->node).find("please fix every failing test"), std::string::npos);
  expect_render_complete();
  expect_clean();
}

// ------------------------------------------------------------------ re-compaction

TEST_F(RollingTest, SecondCompactionExtendsTheFirst) {
  user("u1", words(800));
  assistant("a1", words(800));
  user("u2", words(800));
  assistant("a2", words(800));
  user("u3", words(200));
  assistant("a3", words(200));
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1000;
  o.trigger_percent = 50;
  o.tail_percent = 40;
  CompactResult r1 = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(r1.status, "compacted") << r1.reason;
  auto s1 = st().node(*r1.summary_id);
  user("u4", words(800));
  assistant("a4", words(800));
  f.requests.clear();
  CompactResult r2 = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(r2.status, "compacted") << r2.reason;
  auto s2 = st().node(*r2.summary_id);
  // The new coverage is the old one extended with real turn ids.
  ASSERT_GT(s2->covers_ids.size(), s1->covers_ids.size());
  EXPECT_TRUE(std::equal(s1->covers_ids.begin(), s1->covers_ids.end(), s2->covers_ids.begin()));
  for (const auto& id : s2->covers_ids) EXPECT_EQ(id.rfind("sum-", 0), std::string::npos);
  EXPECT_EQ(s2->predecessor, s1->predecessor);
  // The previous summary was merged, not stacked.
  ASSERT_FALSE(f.requests.empty());
  EXPECT_EQ(f.requests.front().previous_summary, unframe_summary(node_text(*s1)));
  Rendered r = render();
  EXPECT_EQ(r.summary, r2.summary_id);
  std::set<std::string> all(s2->covers_ids.begin(), s2->covers_ids.end());
  all.insert(r.reads.begin() + 1, r.reads.end());
  for (const char* id : {"u2", "a2", "u3", "a3", "u4", "a4"}) EXPECT_TRUE(all.count(id)) << id;
  expect_render_complete();
  expect_clean();
}

// ------------------------------------------------------------------ summarizer faults

struct FaultCase {
  const char* name;
  std::function<std::string(const SummaryRequest&, int)> fn;
  const char* code;
};

TEST_F(RollingTest, SummarizerFaultsLeaveHistoryUntouched) {
  for (int i = 1; i <= 8; ++i) {
    user("u" + std::to_string(i), words(800));
    assistant("a" + std::to_string(i), words(800));
  }
  std::vector<FaultCase> cases = {
      {"error", [](const SummaryRequest&, int) -> std::string { throw Error(Exit::environment, "summarizer.http", "HTTP 500"); },
       "summarizer.http"},
      {"empty", [](const SummaryRequest&, int) { return std::string("   \n"); }, "summarizer.empty"},
      {"96 percent",
       [](const SummaryRequest& r, int) { return (r.previous_summary + r.transcript).substr(0, (r.previous_summary.size() + r.transcript.size()) * 96 / 100); },
       "summarizer.not_reducing"},
      {"garbage", [](const SummaryRequest&, int) { return std::string("\xff\xfe garbage \x80"); }, "summarizer.malformed"},
  };
  const std::vector<std::string> before = reads();
  for (const auto& fc : cases) {
    FakeSummarizer f;
    f.fn = fc.fn;
    RollingOptions o;
    o.env = &testing_env::shared_environment();
    o.window = 4000;
    CompactResult res = compact_rolling(st(), "s", f, o);
    EXPECT_EQ(res.status, "failed") << fc.name;
    EXPECT_EQ(res.error_code, fc.code) << fc.name;
    EXPECT_EQ(f.requests.size(), 1u) << fc.name << ": retried in a loop";
    EXPECT_EQ(summaries(), 0) << fc.name;
    EXPECT_EQ(reads(), before) << fc.name;
    EXPECT_EQ(st().head("s"), std::optional<std::string>("a8"));
  }
  // Every start has its end with the error.
  auto ev = st().events("s", "compact/");
  ASSERT_EQ(ev.size(), 2 * cases.size());
  for (std::size_t i = 0; i < ev.size(); i += 2) {
    EXPECT_EQ(ev[i].type, "compact/start");
    EXPECT_EQ(ev[i + 1].type, "compact/end");
    EXPECT_EQ(ev[i].ref, ev[i + 1].ref);
    EXPECT_TRUE(ev[i + 1].payload["error"].is_object());
  }
  expect_clean();
  // And a retry with a working summarizer succeeds.
  FakeSummarizer good = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 4000;
  EXPECT_EQ(compact_rolling(st(), "s", good, o).status, "compacted");
  expect_clean();
}

TEST_F(RollingTest, LongEvictionIsChunkedAndTheChunkSummariesMerged) {
  for (int i = 1; i <= 30; ++i) {
    user("u" + std::to_string(i), words(1200));
    assistant("a" + std::to_string(i), words(1200));
  }
  const std::int64_t total = render().estimated_tokens;
  FakeSummarizer f = halving();
  f.window = total * 100 / 106;  // history at 106% of the window
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = f.window;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  ASSERT_GT(f.requests.size(), 1u);
  // Leaves (a transcript chunk each), then merges (their summaries as the previous summary, no
  // transcript); the last call merges everything before it (docs/strategies.md "Summarizer calls
  // at scale").
  for (std::size_t i = 0; i < f.requests.size(); ++i) {
    const auto& r = f.requests[i];
    EXPECT_LE(r.input_tokens, f.window / 2) << "call " << i;
    if (r.transcript.empty()) EXPECT_FALSE(r.previous_summary.empty()) << "call " << i;
  }
  EXPECT_FALSE(f.requests.front().transcript.empty());
  EXPECT_TRUE(f.requests.back().transcript.empty());
  EXPECT_FALSE(f.requests.back().previous_summary.empty());
  EXPECT_EQ(res.calls, static_cast<int>(f.requests.size()));
  EXPECT_FALSE(res.partial);
  expect_clean();
}

TEST_F(RollingTest, FailureAfterSomeChunksKeepsCompletedWork) {
  for (int i = 1; i <= 40; ++i) {
    user("u" + std::to_string(i), words(1200));
    assistant("a" + std::to_string(i), words(1200));
  }
  FakeSummarizer f = halving();
  // Chunks large enough that the two finished leaves cover more than the recap and summary
  // they leave behind.
  f.window = 6000;
  auto inner = f.fn;
  f.fn = [inner](const SummaryRequest& r, int call) -> std::string {
    if (call == 3) throw Error(Exit::environment, "summarizer.timeout", "timed out");
    return inner(r, call);
  };
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 20000;
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "compacted") << res.reason;
  EXPECT_TRUE(res.partial);
  EXPECT_EQ(res.calls, 3);
  EXPECT_EQ(res.error_code, "summarizer.timeout");
  EXPECT_EQ(summaries(), 1);
  expect_render_complete();
  expect_clean();
}

TEST_F(RollingTest, CallCapBoundsTheWork) {
  for (int i = 1; i <= 40; ++i) {
    user("u" + std::to_string(i), words(1200));
    assistant("a" + std::to_string(i), words(1200));
  }
  FakeSummarizer f = halving();
  f.window = 4000;
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 20000;
  o.max_calls = 4;
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_LE(f.requests.size(), 4u);
  EXPECT_EQ(res.status, "compacted");
  EXPECT_TRUE(res.partial);
  expect_clean();
}

// ------------------------------------------------------------------ racing writers

TEST_F(RollingTest, AppendWhileSummarizingCommitsNothingAndLosesNothing) {
  user("A", words(2000));
  assistant("B", words(2000));
  user("C", words(400));
  FakeSummarizer f = halving();
  auto inner = f.fn;
  f.fn = [&, inner](const SummaryRequest& r, int call) {
    // A second writer appends D (through its own connection) while the summarizer runs.
    Store other = open_store(path_, Store::Mode::read_write);
    Node d;
    d.id = "D";
    d.session = "s";
    d.predecessor = "C";
    d.role = role::kAssistant;
    d.content = Json::array({Json{{"type", "text"}, {"text", "late"}}});
    Txn t(other.db());
    other.append(d);
    other.move_head("s", "D", "append");
    t.commit();
    return inner(r, call);
  };
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1200;
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "failed");
  EXPECT_EQ(res.error_code, "compact.source_changed");
  EXPECT_EQ(summaries(), 0);
  auto rd = reads();
  EXPECT_EQ(std::count(rd.begin(), rd.end(), "D"), 1);
  expect_clean();
  // The retry sees D and compacts.
  FakeSummarizer g = halving();
  CompactResult again = compact_rolling(st(), "s", g, o);
  EXPECT_EQ(again.status, "compacted") << again.reason;
  rd = reads();
  EXPECT_EQ(std::count(rd.begin(), rd.end(), "D"), 1);
  expect_render_complete();
  expect_clean();
}

TEST_F(RollingTest, HeadMovedToAnotherBranchRefusesTheCommit) {
  user("root", "start");
  user("A1", words(2000), std::string("root"));
  assistant("A2", words(2000));
  user("A3", words(400));
  Node b1;
  FakeSummarizer f = halving();
  auto inner = f.fn;
  f.fn = [&, inner](const SummaryRequest& r, int call) {
    Store other = open_store(path_, Store::Mode::read_write);
    Txn t(other.db());
    other.move_head("s", "root", "checkout");
    t.commit();
    return inner(r, call);
  };
  const std::vector<std::string> b_before{"root"};
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1200;
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "failed");
  EXPECT_EQ(res.error_code, "compact.source_changed");
  EXPECT_EQ(summaries(), 0);
  EXPECT_EQ(reads(), b_before);
  expect_clean();
}

TEST_F(RollingTest, BranchWithoutTheWholeSegmentRendersRaw) {
  user("u1", words(1000));
  assistant("a1", words(1000));
  user("u2", words(1000));
  assistant("a2", words(1000));
  user("u3", words(200));
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1200;
  ASSERT_EQ(compact_rolling(st(), "s", f, o).status, "compacted");
  // A retry from inside the covered range: a sibling of a1.
  Node alt = assistant("a1b", "another answer", {}, std::string("u1"));
  EXPECT_EQ(reads(), (std::vector<std::string>{"u1", "a1b"}));
  expect_clean();
}

// ------------------------------------------------------------------ dry run, config, output

TEST_F(RollingTest, DryRunWritesNothing) {
  for (int i = 1; i <= 6; ++i) {
    user("u" + std::to_string(i), words(800));
    assistant("a" + std::to_string(i), words(800));
  }
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 2000;
  o.dry_run = true;
  const std::int64_t seq = st().max_seq();
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "planned");
  EXPECT_GT(res.covers_count, 0);
  EXPECT_TRUE(f.requests.empty());
  EXPECT_EQ(st().max_seq(), seq);
  EXPECT_TRUE(st().events("s").empty());
  Json j = compact_to_json(res);
  EXPECT_EQ(j["schema"], "ctxfold.compact/1");
  EXPECT_TRUE(j["plan"].is_object());
}

TEST_F(RollingTest, ConfigUsesTheFileSettingNames) {
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  apply_rolling_config(parse_json(R"({"rolling":{"contextWindowTokens":200000,"triggerPercent":70,"tailPercent":20}})"), o);
  EXPECT_EQ(o.window, std::optional<std::int64_t>(200000));
  EXPECT_EQ(o.trigger_percent, 70);
  EXPECT_EQ(o.tail_percent, 20);
  RollingOptions keep;
  keep.env = &testing_env::shared_environment();
  apply_rolling_config(parse_json(R"({"lcm":{}})"), keep);
  EXPECT_FALSE(keep.window);
  EXPECT_THROW(apply_rolling_config(parse_json(R"({"rolling":{"triggerPercent":"80"}})"), o), Error);
  EXPECT_THROW(apply_rolling_config(parse_json(R"({"rolling":{"tailPercent":0}})"), o), Error);
  RollingOptions bad;
  bad.env = &testing_env::shared_environment();
  bad.tail_percent = 90;
  EXPECT_THROW(validate_rolling_options(bad), Error);
}

TEST_F(RollingTest, SummaryNodeShapeAndProvenance) {
  for (int i = 1; i <= 4; ++i) {
    user("u" + std::to_string(i), words(800));
    assistant("a" + std::to_string(i), words(800));
  }
  ExtractiveSummarizer ex;
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1000;
  o.instructions = "keep the paths";
  CompactResult res = compact_rolling(st(), "s", ex, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  auto s = st().node(*res.summary_id);
  EXPECT_EQ(s->kind, kind::kSummary);
  EXPECT_EQ(s->role, role::kUser);
  EXPECT_EQ(s->metadata["strategy"], "rolling");
  EXPECT_EQ(s->metadata["origin"], "compact");
  EXPECT_EQ(s->metadata["compaction"], *res.compaction);
  EXPECT_EQ(s->metadata["provenance"]["summarizer"]["kind"], "extractive");
  EXPECT_EQ(s->metadata["provenance"]["prompt_version"], "rolling-v2");
  EXPECT_EQ(s->metadata["provenance"]["input_digest"].get<std::string>().size(), 64u);
  EXPECT_EQ(s->metadata["provenance"]["parameters"]["instructions"], "keep the paths");
  std::string text = node_text(*s);
  EXPECT_NE(text.find("<compacted-summary>"), std::string::npos);
  EXPECT_NE(text.find("</compacted-summary>"), std::string::npos);
  auto ev = st().events("s", "compact/");
  ASSERT_EQ(ev.size(), 3u) << res.reason << "; passes " << res.passes;
  EXPECT_EQ(ev[0].type, "compact/start");
  EXPECT_EQ(ev[1].type, "compact/summary");
  EXPECT_EQ(ev[1].payload["summary_id"], *res.summary_id);
  EXPECT_EQ(ev[1].payload["raw_summary"], unframe_summary(text));
  EXPECT_EQ(ev[2].type, "compact/end");
  EXPECT_EQ(st().head("s"), std::optional<std::string>("a4"));
  for (const auto& m : st().head_moves("s")) EXPECT_EQ(m.cause, "append");
  expect_clean();
}

TEST_F(RollingTest, SystemPromptIsNeverCompacted) {
  add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", "you are a helper"}}}));
  for (int i = 1; i <= 4; ++i) {
    user("u" + std::to_string(i), words(800));
    assistant("a" + std::to_string(i), words(800));
  }
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1000;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted");
  auto s = st().node(*res.summary_id);
  EXPECT_EQ(s->covers_ids.front(), "u1");
  EXPECT_EQ(s->predecessor, std::optional<std::string>("sys"));
  Rendered r = render();
  EXPECT_EQ(r.items[0].id, "sys");
  EXPECT_EQ(r.items[1].id, *res.summary_id);
  expect_clean();
}

TEST_F(RollingTest, RecapQuotesRecentCoveredUserMessagesWithinBounds) {
  user("u1", "first request");
  assistant("a1", words(800));
  user("u2", "second request with src/x.cpp");
  assistant("a2", words(800));
  user("u3", words(8000));  // larger than the recap budget: shortened
  assistant("a3", words(800));
  user("u4", "fourth");
  assistant("a4", words(800));
  user("u5", "tail");
  assistant("a5", words(200));
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 2000;
  o.tail_percent = 10;
  CompactResult res = compact_rolling(st(), "s", f, o);
  ASSERT_EQ(res.status, "compacted") << res.reason;
  auto s = st().node(*res.summary_id);
  auto rc = rolling_recap(st(), *s);
  ASSERT_TRUE(rc);
  // u4 stays in the tail with its turn; the first user message is always quoted; u3
  // fills the rest of the 1,000-token budget, shortened.
  EXPECT_EQ(rc->quoted_ids, (std::vector<std::string>{"u1", "u3"}));
  EXPECT_NE(node_text(rc->node).find("first request"), std::string::npos);
  EXPECT_NE(node_text(rc->node).find("[…]"), std::string::npos);
  EXPECT_EQ(s->metadata["recap_ids"], Json::array({"u1", "u2", "u3"}));
  EXPECT_LE(rc->estimated_tokens, 1000 + 100);
  EXPECT_TRUE(is_recap_node(rc->node));
  EXPECT_EQ(rc->node.role, role::kUser);
}

// ------------------------------------------------------------------ invariants broken on purpose

TEST_F(RollingTest, InvariantsCatchBrokenSummaries) {
  user("u1", words(800));
  assistant("a1", words(800), {"T1"});
  tool("r1", {"T1"}, words(800));
  user("u2", words(800));
  assistant("a2", words(100));
  auto write = [&](Node n) {
    Txn t(st().db());
    st().append(n);
    t.commit();
  };
  // I3: not contiguous, splits a tool pair, wrong splice.
  Node bad;
  bad.id = "bad";
  bad.session = "s";
  bad.kind = kind::kSummary;
  bad.role = role::kUser;
  bad.predecessor = "u1";
  bad.content = Json::array({Json{{"type", "text"}, {"text", "x"}}});
  bad.metadata = Json{{"strategy", "rolling"}, {"origin", "compact"}, {"compaction", "cmp-none"}};
  bad.covers_ids = {"a1"};  // its result r1 stays outside; predecessor u1 is right
  write(bad);
  std::vector<std::string> ss{"s"};
  Check i3 = check_summary_coverage(st(), ss);
  EXPECT_FALSE(i3.ok);
  Check i7 = check_compaction_log(st(), ss);
  EXPECT_FALSE(i7.ok);  // no compact/summary record, no provenance
  Node gap = bad;
  gap.id = "gap";
  gap.covers_ids = {"u1", "r1"};
  gap.predecessor.reset();
  write(gap);
  i3 = check_summary_coverage(st(), ss);
  bool contiguity = false;
  for (const auto& v : i3.violations) contiguity |= v.message.find("contiguous") != std::string::npos;
  EXPECT_TRUE(contiguity);
  // I4: the newest (gap) is active; a render consulting only it is fine, the overlap warns.
  Check i4 = check_active_summary(st(), ss);
  EXPECT_TRUE(i4.ok);
}

TEST_F(RollingTest, OrphanStartIsInertAndDoesNotBlock) {
  for (int i = 1; i <= 4; ++i) {
    user("u" + std::to_string(i), words(800));
    assistant("a" + std::to_string(i), words(800));
  }
  {
    Txn t(st().db());
    st().log_event("s", "compact/start", std::string("cmp-crashed"), Json::object());
    t.commit();
  }
  std::vector<std::string> ss{"s"};
  Check i7 = check_compaction_log(st(), ss);
  EXPECT_TRUE(i7.ok);
  EXPECT_EQ(i7.warnings.size(), 1u);
  FakeSummarizer f = halving();
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 1000;
  EXPECT_EQ(compact_rolling(st(), "s", f, o).status, "compacted");
  expect_clean();
}

TEST_F(RollingTest, StillOverTheTriggerRecompactsTheCheckpointBounded) {
  for (int i = 1; i <= 10; ++i) {
    user("u" + std::to_string(i), words(800));
    assistant("a" + std::to_string(i), words(800));
  }
  // A summarizer that reduces, but not much: the first pass stays over the trigger.
  FakeSummarizer f;
  f.fn = [](const SummaryRequest& r, int) {
    std::string in = r.previous_summary + r.transcript;
    return in.substr(0, in.size() / 2);
  };
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.window = 2000;
  o.max_output_tokens = 100000;
  CompactResult res = compact_rolling(st(), "s", f, o);
  EXPECT_EQ(res.status, "compacted") << res.reason;
  EXPECT_LE(res.passes, 3);
  EXPECT_LE(f.requests.size(), 3u * 2);
  expect_clean();
}

}  // namespace
}  // namespace ctxfold
