// The lcm strategy (docs/strategies.md "lcm"): leaves, condensation, the covered cursor, failures,
// the retry-then-pointer rule, the lcm render, switching with rolling,
// recall over the tree, and invariant 8.
#include <gtest/gtest.h>

#include <set>

#include "invariants/verify.hpp"
#include "invariants/verify_lcm.hpp"
#include "recall/describe.hpp"
#include "recall/expand.hpp"
#include "render/render.hpp"
#include "session_fixture.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "strategies/units.hpp"
#include "summarize/extractive.hpp"
#include "tokens/estimate.hpp"
#include "util/error.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

class LcmTest : public SessionTest {
 protected:
  /// n turns: a user message, an assistant call and its result, an assistant answer (~600 tokens each).
  void turns(int n, int from = 1) {
    for (int i = from; i < from + n; ++i) {
      std::string k = std::to_string(i);
      user("u" + k, "request " + k + " " + words(400, 'a'));
      assistant("a" + k, "working on " + k, {"T" + k});
      tool("r" + k, {"T" + k}, "result " + k + " " + words(1200, 'b'));
      assistant("b" + k, "done " + k + " " + words(400, 'c'));
    }
  }
  LcmOptions opts(std::int64_t window = 6000) {
    LcmOptions o;
    o.env = &testing_env::shared_environment();
    o.window = window;
    o.leaf_chunk_tokens = 1200;
    o.fanout = 2;
    return o;
  }
  FakeSummarizer shrinking() {
    FakeSummarizer f;
    f.fn = [](const SummaryRequest& r, int call) {
      return "summary " + std::to_string(call) + ": " + r.transcript.substr(0, r.transcript.size() / 10);
    };
    return f;
  }
  Rendered render(const std::string& strategy = "lcm") {
    RenderOptions ro;
    ro.strategy = strategy;
    return render_context(st(), "s", ro);
  }
  std::vector<Node> lcm_nodes() {
    std::vector<Node> out;
    for (auto& n : st().view_nodes("s", kind::kSummary, kLatest, true))
      if (json_str(n.metadata, "strategy") == "lcm") out.push_back(std::move(n));
    return out;
  }
  void expect_verifies() {
    VerifyReport r = verify_invariants(st(), {"s"});
    for (const auto& c : r.checks)
      for (const auto& v : c.violations) ADD_FAILURE() << c.id << ": " << v.message;
    EXPECT_TRUE(r.ok);
  }
  /// Every message of HEAD's spine is read exactly once: raw, or inside exactly one rendered view.
  void expect_complete(const Rendered& r) {
    std::multiset<std::string> seen;
    std::set<std::string> views;
    if (r.summary) views.insert(*r.summary);
    for (const auto& f : r.folds) views.insert(f.id);
    for (const auto& id : r.reads)
      if (!views.count(id)) seen.insert(id);
    for (const auto& v : views) {
      auto node = st().node(v);
      for (const auto& id : node->covers_ids) seen.insert(id);
    }
    std::optional<std::string> cur = st().head("s");
    while (cur) {
      auto n = st().node(*cur, false);
      if (n->kind == kind::kMessage) EXPECT_EQ(seen.count(*cur), 1u) << *cur;
      cur = n->predecessor;
    }
  }
  std::vector<Event> ends() { return st().events("s", "compact/end"); }
};

TEST_F(LcmTest, BelowTheTriggerIsPlainHistoryWithoutACall) {
  turns(2);
  FakeSummarizer f = shrinking();
  CompactResult r = compact_lcm(st(), "s", f, opts(100000));
  EXPECT_EQ(r.status, "noop");
  EXPECT_EQ(r.strategy, "lcm");
  EXPECT_TRUE(f.requests.empty());
  EXPECT_TRUE(lcm_nodes().empty());
  EXPECT_TRUE(render().folds.empty());
}

TEST_F(LcmTest, LeavesThenParentsWithChildrenKept) {
  turns(10);
  FakeSummarizer f = shrinking();
  CompactResult r = compact_lcm(st(), "s", f, opts());
  ASSERT_EQ(r.status, "compacted") << r.reason;
  EXPECT_FALSE(r.partial);
  const Json leaves = r.details["leaves"], parents = r.details["parents"];
  ASSERT_GE(leaves.size(), 4u);
  ASSERT_GE(parents.size(), 1u);
  EXPECT_EQ(static_cast<std::size_t>(r.calls), leaves.size() + parents.size());
  // Leaves: depth 1, contiguous and adjacent, each from the leaf prompt.
  std::optional<std::string> prev_last;
  for (const auto& id : leaves) {
    Node n = *st().node(id.get<std::string>());
    EXPECT_EQ(n.metadata["depth"], 1);
    EXPECT_EQ(n.metadata["provenance"]["prompt_version"], kLcmLeafPrompt);
    ASSERT_FALSE(n.covers_ids.empty());
    if (prev_last) EXPECT_EQ(n.predecessor, prev_last);
    prev_last = n.covers_ids.back();
  }
  EXPECT_EQ(r.details["cursor"]["after"], *prev_last);
  EXPECT_TRUE(r.details["cursor"]["before"].is_null());
  // Parents: covers are their children's concatenated; depth one above; children kept.
  for (const auto& id : parents) {
    Node p = *st().node(id.get<std::string>());
    std::vector<std::string> joined;
    std::int64_t child_depth = 0;
    for (const auto& c : p.metadata["children"]) {
      auto child = st().node(c.get<std::string>());
      ASSERT_TRUE(child) << c;
      joined.insert(joined.end(), child->covers_ids.begin(), child->covers_ids.end());
      child_depth = child->metadata["depth"].get<std::int64_t>();
    }
    EXPECT_EQ(p.covers_ids, joined);
    EXPECT_EQ(p.metadata["depth"].get<std::int64_t>(), child_depth + 1);
    EXPECT_EQ(p.metadata["children"].size(), 2u);
    EXPECT_EQ(p.metadata["provenance"]["prompt_version"], kLcmCondensePrompt);
  }
  // The render: ordered top nodes with their range, then the verbatim tail with the latest user unit.
  Rendered rr = render();
  ASSERT_FALSE(rr.folds.empty());
  EXPECT_FALSE(rr.summary);
  // The first user message stays verbatim ahead of the folds.
  EXPECT_EQ(r.details["pinned"], "u1");
  ASSERT_GE(rr.sections.size(), 3u);
  EXPECT_EQ(rr.sections.front().kind, "prefix");
  EXPECT_EQ(rr.sections.front().ids, std::vector<std::string>{"u1"});
  EXPECT_EQ(rr.sections[1].kind, "summary");
  EXPECT_EQ(rr.sections.back().kind, "tail");
  EXPECT_EQ(*st().node(leaves[0].get<std::string>())->predecessor, "u1");
  EXPECT_LT(rr.estimated_tokens, r.estimated_tokens_before);
  EXPECT_EQ(r.estimated_tokens_after, rr.estimated_tokens);
  const Node& first_item = rr.items[1];
  const std::string header = first_item.content[0]["text"];
  EXPECT_NE(header.find(rr.folds.front().id), std::string::npos) << header;
  EXPECT_NE(header.find(rr.folds.front().first), std::string::npos) << header;
  EXPECT_NE(header.find(rr.folds.front().last), std::string::npos) << header;
  EXPECT_LT(rr.folds.front().first_seq, rr.folds.front().last_seq);
  for (std::size_t i = 1; i < rr.folds.size(); ++i) EXPECT_LT(rr.folds[i - 1].last_seq, rr.folds[i].first_seq);
  EXPECT_NE(std::find(rr.reads.begin(), rr.reads.end(), "u10"), rr.reads.end());
  expect_complete(rr);
  expect_complete(render("rolling"));  // the default render reads the lcm folds too
  EXPECT_EQ(render("rolling").folds.size(), rr.folds.size());
  expect_verifies();
  // A second run below the trigger does nothing.
  CompactResult again = compact_lcm(st(), "s", f, opts());
  EXPECT_NE(again.status, "compacted");
}

TEST_F(LcmTest, TheTailStartsAtTheLatestUserMessageWhenItFits) {
  turns(6);
  user("u-last", "the latest request " + words(200));
  assistant("a-last", "on it", {"L1"});
  tool("r-last", {"L1"}, words(4400, 'z'));
  FakeSummarizer f = shrinking();
  CompactResult r = compact_lcm(st(), "s", f, opts(4000));  // tail budget 1000 tokens; its last step alone ~1100
  ASSERT_EQ(r.status, "compacted") << r.reason;
  Rendered rr = render();
  ASSERT_GE(rr.sections.size(), 2u);
  EXPECT_EQ(rr.sections.back().kind, "tail");
  EXPECT_EQ(rr.sections.back().ids.front(), "u-last");
  for (const auto& n : lcm_nodes())
    for (const auto& c : n.covers_ids) EXPECT_NE(c, "u-last");
  expect_verifies();
}

TEST_F(LcmTest, ALeafCoversAtMostASixteenthOfTheWindow) {
  turns(10);
  FakeSummarizer f = shrinking();
  LcmOptions o = opts(6400);
  o.leaf_chunk_tokens = 20000;  // the shipped default: the window bounds it
  CompactResult r = compact_lcm(st(), "s", f, o);
  ASSERT_EQ(r.status, "compacted") << r.reason;
  EXPECT_EQ(r.details["chunk_tokens"], 400);
  EXPECT_GE(r.details["leaves"].size(), 2u);
  o.leaf_chunk_tokens = 300;  // a smaller setting still wins
  o.force = true;
  turns(10, 11);
  r = compact_lcm(st(), "s", f, o);
  ASSERT_EQ(r.status, "compacted") << r.reason;
  EXPECT_EQ(r.details["chunk_tokens"], 300);
  expect_verifies();
}

TEST(RetainedTail, TheUnitCrossingTheTargetIsDroppedWhenItTakesTheTailPastTheCap) {
  auto unit = [](const char* kind, std::int64_t tokens) {
    Unit u;
    u.kind = kind;
    u.tokens = tokens;
    return u;
  };
  std::vector<Unit> units{unit("user", 100), unit("step", 100), unit("user", 5000), unit("step", 100)};
  // Without a cap the 5000-token turn start is retained whole (rounding toward retaining more).
  EXPECT_EQ(retained_tail_start(units, 150, 1000000), 2u);
  // With a cap of 1000 it is evicted: the tail is the last step alone (cut between steps).
  EXPECT_EQ(retained_tail_start(units, 150, 1000), 3u);
  // The latest unit always stays, however large.
  std::vector<Unit> one{unit("user", 100), unit("user", 9000)};
  EXPECT_EQ(retained_tail_start(one, 150, 1000), 1u);
  // Within the cap nothing changes.
  std::vector<Unit> small{unit("user", 100), unit("step", 100), unit("user", 300), unit("step", 100)};
  EXPECT_EQ(retained_tail_start(small, 150, 1000), 2u);
}

TEST_F(LcmTest, TheLatestUnitStaysWholeWhenItAloneExceedsTheTail) {
  turns(3);
  user("u-last", "the latest request " + words(200));
  assistant("a-step", "first step", {"L0"});
  tool("r-step", {"L0"}, words(800, 'y'));
  assistant("a-last", "a long agentic run", {"L1"});
  tool("r-last", {"L1"}, words(20000, 'z'));
  FakeSummarizer f = shrinking();
  CompactResult r = compact_lcm(st(), "s", f, opts(4000));
  ASSERT_EQ(r.status, "compacted") << r.reason;
  Rendered rr = render();
  // The turn is cut between its steps: the last step, whole, is the verbatim tail.
  EXPECT_EQ(rr.sections.back().kind, "tail");
  EXPECT_EQ(rr.sections.back().ids, (std::vector<std::string>{"a-last", "r-last"}));
  EXPECT_NE(r.reason.find("still"), std::string::npos) << r.reason;  // the tail alone is over the trigger
  expect_complete(rr);
  expect_verifies();
}

TEST_F(LcmTest, AFailedSummaryDoesNotAdvanceTheCursorAndKeepsWhatSucceeded) {
  turns(10);
  FakeSummarizer f = shrinking();
  auto ok = f.fn;
  f.fn = [ok](const SummaryRequest& r, int call) -> std::string {
    if (call == 3) throw Error(Exit::environment, "summarizer.http", "provider down");
    return ok(r, call);
  };
  CompactResult r = compact_lcm(st(), "s", f, opts());
  ASSERT_EQ(r.status, "compacted");
  EXPECT_TRUE(r.partial);
  EXPECT_EQ(r.error_code, "summarizer.http");
  EXPECT_EQ(r.details["leaves"].size(), 2u);
  Node second = *st().node(r.details["leaves"][1].get<std::string>());
  EXPECT_EQ(r.details["cursor"]["after"], second.covers_ids.back());
  auto e = ends();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].payload["cursor"], second.covers_ids.back());
  EXPECT_EQ(e[0].payload["error"]["code"], "summarizer.http");
  expect_verifies();
  // The retry continues right after the cursor.
  FakeSummarizer g = shrinking();
  LcmOptions forced = opts();
  forced.force = true;
  CompactResult r2 = compact_lcm(st(), "s", g, forced);
  ASSERT_EQ(r2.status, "compacted") << r2.reason;
  EXPECT_EQ(r2.details["cursor"]["before"], second.covers_ids.back());
  Node next = *st().node(r2.details["leaves"][0].get<std::string>());
  EXPECT_EQ(next.predecessor, second.covers_ids.back());
  expect_verifies();
}

TEST_F(LcmTest, AFirstFailureWritesNoSummary) {
  turns(10);
  for (const char* bad : {"throw", "", "\xff\xfe"}) {
    FakeSummarizer f;
    std::string answer = bad;
    f.fn = [answer](const SummaryRequest&, int) -> std::string {
      if (answer == "throw") throw Error(Exit::environment, "summarizer.timeout", "timed out");
      return answer;
    };
    CompactResult r = compact_lcm(st(), "s", f, opts());
    EXPECT_EQ(r.status, "failed") << bad;
    EXPECT_TRUE(lcm_nodes().empty());
  }
  auto e = ends();
  ASSERT_EQ(e.size(), 3u);
  for (const auto& x : e) {
    EXPECT_EQ(x.payload["status"], "failed");
    EXPECT_TRUE(x.payload["cursor"].is_null());
  }
  EXPECT_EQ(e[1].payload["error"]["code"], "summarizer.empty");
  EXPECT_EQ(e[2].payload["error"]["code"], "summarizer.malformed");
  expect_verifies();
}

TEST_F(LcmTest, ASummaryLargerThanItsSourceIsRetriedSmallerThenAPointer) {
  turns(6);
  FakeSummarizer f;
  f.fn = [](const SummaryRequest& r, int) { return r.transcript + r.transcript; };  // always larger
  LcmOptions o = opts(3000);
  o.fanout = 64;
  CompactResult r = compact_lcm(st(), "s", f, o);
  ASSERT_EQ(r.status, "compacted") << r.reason;
  ASSERT_GE(f.requests.size(), 2u);
  EXPECT_EQ(f.requests[1].max_output_tokens, f.requests[0].max_output_tokens / 2);
  EXPECT_EQ(f.requests[1].transcript, f.requests[0].transcript);
  EXPECT_EQ(static_cast<std::size_t>(r.calls), 2 * r.details["leaves"].size());
  for (const auto& id : r.details["leaves"]) {
    Node n = *st().node(id.get<std::string>());
    EXPECT_EQ(n.metadata["lcm"]["pointer"], true);
    EXPECT_NE(node_text(n).find("ctxfold expand " + n.id), std::string::npos);
  }
  expect_verifies();

  // A retry that fits is kept.
  turns(6, 7);
  FakeSummarizer g;
  g.fn = [](const SummaryRequest& r, int call) {
    return call % 2 == 1 ? r.transcript + r.transcript : std::string("short retry");
  };
  CompactResult r2 = compact_lcm(st(), "s", g, o);
  ASSERT_EQ(r2.status, "compacted") << r2.reason;
  Node leaf = *st().node(r2.details["leaves"][0].get<std::string>());
  EXPECT_EQ(node_text(leaf), "short retry");
  EXPECT_EQ(leaf.metadata["lcm"]["pointer"], false);
}

TEST_F(LcmTest, SourceChangedWhileSummarizingCommitsNothing) {
  turns(10);
  FakeSummarizer f = shrinking();
  auto ok = f.fn;
  bool appended = false;
  f.fn = [&, ok](const SummaryRequest& r, int call) {
    if (!appended) {
      appended = true;
      user("late", "a message from another writer");
    }
    return ok(r, call);
  };
  CompactResult r = compact_lcm(st(), "s", f, opts());
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.error_code, "compact.source_changed");
  EXPECT_TRUE(lcm_nodes().empty());
  expect_verifies();
}

TEST_F(LcmTest, DryRunPlansWithoutWriting) {
  turns(10);
  FakeSummarizer f = shrinking();
  LcmOptions o = opts();
  o.dry_run = true;
  CompactResult r = compact_lcm(st(), "s", f, o);
  EXPECT_EQ(r.status, "planned");
  EXPECT_GE(r.plan["chunks"].get<int>(), 4);
  EXPECT_TRUE(f.requests.empty());
  EXPECT_TRUE(st().events("s").empty());
}

TEST_F(LcmTest, SwitchingWithRollingReadsTheOtherStrategysFolds) {
  turns(10);
  // rolling first: one summary of the early turns.
  FakeSummarizer rf;
  rf.fn = [](const SummaryRequest& r, int) {
    return "ROLLING-SUMMARY " + (r.previous_summary + r.transcript).substr(0, 200);
  };
  RollingOptions ro;
  ro.env = &testing_env::shared_environment();
  ro.window = 6000;
  CompactResult r1 = compact_rolling(st(), "s", rf, ro);
  ASSERT_EQ(r1.status, "compacted") << r1.reason;
  const std::vector<std::string> rolled1 = st().node(*r1.summary_id)->covers_ids;
  // lcm starts from the rolling summary as its covered prefix: its leaves summarize the durable
  // rows after it, never the rolling text, and its render shows the summary, then its folds.
  turns(8, 11);
  FakeSummarizer lf = shrinking();
  CompactResult r2 = compact_lcm(st(), "s", lf, opts());
  ASSERT_EQ(r2.status, "compacted") << r2.reason;
  for (const auto& q : lf.requests) EXPECT_EQ(q.transcript.find("ROLLING-SUMMARY"), std::string::npos);
  EXPECT_EQ(r2.details["cursor"]["before"], rolled1.back());
  EXPECT_EQ(*lcm_nodes().front().predecessor, rolled1.back());
  EXPECT_EQ(render("lcm").summary, r1.summary_id);
  expect_complete(render("lcm"));
  // rolling again: it reads the lcm folds past its summary as source history, and its new summary
  // still covers real turns only.
  Rendered before = render("rolling");
  ASSERT_TRUE(before.summary);
  expect_complete(before);
  turns(4, 19);
  FakeSummarizer rf2;
  rf2.fn = rf.fn;
  CompactResult r3 = compact_rolling(st(), "s", rf2, ro);
  ASSERT_EQ(r3.status, "compacted") << r3.reason;
  bool read_fold = false;
  for (const auto& q : rf2.requests) read_fold = read_fold || q.transcript.find("ctxfold lcm summary") != std::string::npos;
  EXPECT_EQ(read_fold, !before.folds.empty());
  Node rolled = *st().node(*r3.summary_id);
  for (const auto& id : rolled.covers_ids) EXPECT_NE(st().node(id, false)->kind, kind::kSummary) << id;
  expect_complete(render("rolling"));
  expect_verifies();
  // Back to lcm: it continues from its own cursor and never summarizes the rolling summary.
  turns(6, 23);
  FakeSummarizer lf2 = shrinking();
  CompactResult r4 = compact_lcm(st(), "s", lf2, opts());
  ASSERT_EQ(r4.status, "compacted") << r4.reason;
  EXPECT_EQ(r4.details["cursor"]["before"], r2.details["cursor"]["after"]);
  for (const auto& q : lf2.requests) EXPECT_EQ(q.transcript.find("ROLLING-SUMMARY"), std::string::npos);
  // The second rolling summary read the lcm folds, so lcm's prefix stays the first one.
  EXPECT_EQ(render("lcm").summary, r1.summary_id);
  expect_complete(render("lcm"));
  expect_verifies();
}

// An imported compaction (a Claude Code session: the harness's summary covers the turns before
// its boundary; the requests after it were measured on summary + later turns). lcm renders the
// summary as its covered prefix (not the raw history it replaced), its leaves start after it, and
// the calibration only matches requests whose context the render shows: the figure is never far
// below the estimate (the real session gave a remainder of -107,221 and "calibrated" 9,373
// tokens for an estimate of 22,535).
TEST_F(LcmTest, AnImportedCompactionSummaryIsLcmsCoveredPrefixAndCalibrationMatchesIt) {
  turns(8);
  std::vector<std::string> covered;
  for (int i = 1; i <= 8; ++i)
    for (const char* p : {"u", "a", "r", "b"}) covered.push_back(p + std::to_string(i));
  const std::string boundary = last_;
  {
    Node sum;
    sum.id = "imported-summary";
    sum.session = "s";
    sum.kind = kind::kSummary;
    sum.role = role::kUser;
    sum.content = Json::array({Json{{"type", "text"}, {"text", "IMPORTED-SUMMARY of turns 1 to 8"}}});
    sum.metadata = Json{{"origin", "import"}};
    sum.covers_ids = covered;
    Txn t(st().db());
    ASSERT_EQ(st().append(sum), AppendResult::added);
    t.commit();
  }
  last_ = boundary;
  // Turns after the boundary; the responses carry usage measured on summary + these turns + a
  // 3000-token remainder the transcript does not hold (tools, system prompt).
  auto measured_reply = [&](const std::string& id) {
    Rendered now = render("rolling");
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = last_;
    n.role = role::kAssistant;
    n.content = Json::array({Json{{"type", "text"}, {"text", "answer " + id + " " + words(200, 'd')}}});
    n.metadata = Json{{"model", "claude-opus-4-6"},
                      {"message_id", "msg_" + id},
                      {"usage", {{"input_tokens", now.estimated_tokens + 3000}, {"output_tokens", 10}}}};
    Txn t(st().db());
    ASSERT_EQ(st().append(n), AppendResult::added);
    st().move_head("s", id, "append");
    t.commit();
    last_ = id;
  };
  for (int i = 9; i <= 14; ++i) {
    user("u" + std::to_string(i), "request " + std::to_string(i) + " " + words(400, 'a'));
    measured_reply("m" + std::to_string(i));
  }
  Rendered rolling = render("rolling"), lcm = render("lcm"), raw = render("raw");
  ASSERT_EQ(rolling.summary, std::optional<std::string>("imported-summary"));
  EXPECT_EQ(lcm.summary, std::optional<std::string>("imported-summary"));
  EXPECT_LT(lcm.estimated_tokens, raw.estimated_tokens / 2);
  expect_complete(lcm);
  // Calibrated on a matching request: the remainder is the 3000 the transcript lacks.
  EXPECT_EQ(lcm.tokens.kind, "calibrated");
  ASSERT_TRUE(lcm.tokens.calibration);
  EXPECT_GT(lcm.tokens.calibration->measured - lcm.tokens.calibration->estimated, 2000);
  // The raw view never calibrates on requests that saw the summary.
  EXPECT_GE(raw.tokens.value, raw.estimated_tokens);

  FakeSummarizer f = shrinking();
  LcmOptions o = opts(lcm.tokens.value * 100 / 90);
  o.leaf_chunk_tokens = 800;
  CompactResult r = compact_lcm(st(), "s", f, o);
  ASSERT_EQ(r.status, "compacted") << r.reason;
  EXPECT_EQ(r.details["cursor"]["before"], covered.back());
  for (const auto& q : f.requests) EXPECT_EQ(q.transcript.find("IMPORTED-SUMMARY"), std::string::npos);
  for (const auto& n : lcm_nodes())
    for (const auto& id : n.covers_ids) EXPECT_EQ(std::find(covered.begin(), covered.end(), id), covered.end()) << id;
  Rendered after = render("lcm");
  EXPECT_EQ(after.summary, std::optional<std::string>("imported-summary"));
  EXPECT_FALSE(after.folds.empty());
  expect_complete(after);
  // Consistent figures: the calibrated one is never below the estimate of the same context.
  EXPECT_GE(after.tokens.value, after.estimated_tokens);
  EXPECT_GE(r.tokens_after.value, r.estimated_tokens_after);
  expect_verifies();
}

// An open step at HEAD (docs/strategies.md "Hard cases"): HEAD is an assistant message whose call
// has no result yet, after one long turn (the session's only user message, then closed steps): the
// open step stays in the tail, the first user message is kept verbatim (not covered by a leaf), the
// render does not start with an assistant message.
TEST_F(LcmTest, TheFirstUserMessageIsKeptAndTheOpenStepStays) {
  user("u1", "THE TASK: port the importer to the new schema");
  for (int i = 1; i <= 12; ++i) {
    std::string k = std::to_string(i);
    assistant("a" + k, "step " + k, {"T" + k});
    tool("r" + k, {"T" + k}, words(1600, 'b'));
  }
  assistant("open", "running the tests", {"OPEN"});
  FakeSummarizer f = shrinking();
  CompactResult r = compact_lcm(st(), "s", f, opts());
  ASSERT_EQ(r.status, "compacted") << r.reason;
  for (const auto& n : lcm_nodes())
    EXPECT_EQ(std::find(n.covers_ids.begin(), n.covers_ids.end(), "u1"), n.covers_ids.end()) << n.id;
  Rendered rr = render();
  ASSERT_FALSE(rr.folds.empty());
  ASSERT_FALSE(rr.items.empty());
  EXPECT_EQ(rr.items.front().id, "u1");
  EXPECT_NE(rr.items.front().role, role::kAssistant);
  EXPECT_EQ(rr.items.back().id, "open");
  expect_complete(rr);
  expect_verifies();
}

TEST_F(LcmTest, RecallOverTheTree) {
  turns(10);
  FakeSummarizer f = shrinking();
  CompactResult r = compact_lcm(st(), "s", f, opts());
  ASSERT_EQ(r.status, "compacted");
  const std::string parent = r.details["parents"][0];
  Node p = *st().node(parent);
  const std::string child = p.metadata["children"][0];
  Json d = describe_node(st(), parent);
  EXPECT_EQ(d["depth"], 2);
  EXPECT_EQ(d["children"], p.metadata["children"]);
  EXPECT_EQ(d["coverage"]["count"], p.covers_ids.size());
  EXPECT_EQ(d["coverage"]["first"], p.covers_ids.front());
  Json dc = describe_node(st(), child);
  EXPECT_EQ(dc["depth"], 1);
  EXPECT_EQ(dc["active"], false);  // condensed: not on the frontier
  EXPECT_NE(std::find(dc["parents"].begin(), dc["parents"].end(), Json(parent)), dc["parents"].end());
  Json l = list_views(st(), "s", 0, -1);
  std::set<std::string> frontier;
  for (const auto& it : l["items"])
    if (it["frontier"].get<bool>()) frontier.insert(it["id"].get<std::string>());
  std::set<std::string> rendered;
  for (const auto& fo : render().folds) rendered.insert(fo.id);
  EXPECT_EQ(frontier, rendered);
  // expand of the parent is its rows' text, in order, across pages.
  std::string all;
  std::int64_t offset = 0;
  for (int pages = 0; pages < 1000; ++pages) {
    ExpandPage page = expand(st(), parent, offset, 997);
    for (const auto& row : page.rows) all += row.text;
    if (!page.next_offset) break;
    offset = *page.next_offset;
  }
  // Pages split rows; separators are not part of the rows' text, so compare without them.
  std::string want_rows;
  for (const auto& id : p.covers_ids) want_rows += node_text(*st().node(id, false));
  EXPECT_EQ(all, want_rows);
}

TEST_F(LcmTest, I8CatchesABrokenTree) {
  turns(10);
  FakeSummarizer f = shrinking();
  ASSERT_EQ(compact_lcm(st(), "s", f, opts()).status, "compacted");
  EXPECT_TRUE(check_lcm_tree(st(), {"s"}).ok);
  // A parent written with a child list that does not match its range.
  Node p = *st().node(lcm_nodes().back().id);
  ASSERT_GT(p.metadata["depth"].get<int>(), 1);
  Node bad = p;
  bad.id = "bad-parent";
  bad.metadata.erase("covers");
  bad.metadata["children"] = Json::array({p.metadata["children"][0]});
  {
    Txn t(st().db());
    ASSERT_EQ(st().append(bad), AppendResult::added);
    t.commit();
  }
  Check c = check_lcm_tree(st(), {"s"});
  EXPECT_FALSE(c.ok);
  bool range = false, twice = false;
  for (const auto& v : c.violations) {
    range = range || v.message.find("not the union of its children") != std::string::npos;
    twice = twice || v.message.find("child of two parents") != std::string::npos;
  }
  EXPECT_TRUE(range);
  EXPECT_TRUE(twice);
}

TEST_F(LcmTest, ConfigAndOptions) {
  LcmOptions o;
  o.env = &testing_env::shared_environment();
  apply_lcm_config(parse_json(R"({"lcm":{"contextWindowTokens":60000,"triggerPercent":70,"tailPercent":20,"fanout":3,"leafChunkTokens":8000}})"), o);
  EXPECT_EQ(o.window, 60000);
  EXPECT_EQ(o.trigger_percent, 70);
  EXPECT_EQ(o.tail_percent, 20);
  EXPECT_EQ(o.fanout, 3);
  EXPECT_EQ(o.leaf_chunk_tokens, 8000);
  LcmOptions untouched;
  untouched.env = &testing_env::shared_environment();
  apply_lcm_config(parse_json(R"({"rolling":{"contextWindowTokens":5}})"), untouched);
  EXPECT_FALSE(untouched.window);
  EXPECT_EQ(untouched.fanout, 4);
  EXPECT_EQ(untouched.trigger_percent, 80);
  EXPECT_EQ(untouched.tail_percent, 25);
  auto code = [](const char* text) {
    try {
      LcmOptions x;
      x.env = &testing_env::shared_environment();
      apply_lcm_config(parse_json(text), x);
    } catch (const Error& e) {
      return e.code();
    }
    return std::string("ok");
  };
  EXPECT_EQ(code(R"({"lcm":{"fanout":1}})"), "config.invalid");
  EXPECT_EQ(code(R"({"lcm":{"leafChunkTokens":"big"}})"), "config.invalid");
  EXPECT_EQ(code(R"({"lcm":[]})"), "config.invalid");
  LcmOptions v;
  v.env = &testing_env::shared_environment();
  v.fanout = 1;
  EXPECT_THROW(validate_lcm_options(v), Error);
}

}  // namespace
}  // namespace ctxfold
