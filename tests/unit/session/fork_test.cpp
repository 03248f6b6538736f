// fork, rewind and invariant 9 (docs/strategies.md "What a fork copies", docs/invariants.md
// "I9"). Synthetic ledgers for the exact rules, then the real Claude Code transcripts
// that hold a branch and compactions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "import/import.hpp"
#include "invariants/verify.hpp"
#include "invariants/verify_fork.hpp"
#include "render/render.hpp"
#include "session/fork.hpp"
#include "session/snapshot.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class ForkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-fork-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_.emplace(open_store((dir_ / "t.db").string(), Store::Mode::read_write));
    st().create_session(SessionInfo{"s"});
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  Store& st() { return *store_; }

  void msg(const std::string& id, std::optional<std::string> pred, bool advance = true, const std::string& session = "s") {
    Node n;
    n.id = id;
    n.session = session;
    n.predecessor = std::move(pred);
    n.role = (id.back() % 2) ? "user" : "assistant";  // odd last digit: user
    n.content = Json::array({Json{{"type", "text"}, {"text", n.role + " says " + id}}});
    ASSERT_EQ(st().append(n), AppendResult::added) << id;
    if (advance) st().move_head(session, id, "append");
  }
  /// n1..nN, n1 a root; HEAD on nN.
  void chain(int count) {
    std::optional<std::string> pred;
    for (int i = 1; i <= count; ++i) {
      std::string id = "n" + std::to_string(i);
      msg(id, pred);
      pred = id;
    }
  }
  Node view(const std::string& id, std::vector<std::string> covers, Json meta = Json{{"strategy", "rolling"}},
            const std::string& k = kind::kSummary) {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = st().predecessor_of(covers.front());
    n.kind = k;
    n.role = "user";
    n.content = Json::array({Json{{"type", "text"}, {"text", "summary " + id}}});
    n.metadata = std::move(meta);
    n.covers_ids = std::move(covers);
    EXPECT_EQ(st().append(n), AppendResult::added) << id;
    return n;
  }
  static std::vector<std::string> range(int from, int to) {
    std::vector<std::string> v;
    for (int i = from; i <= to; ++i) v.push_back("n" + std::to_string(i));
    return v;
  }
  /// The openai messages of a render from head. For a fork's render the fork's id prefix
  /// "<session>:" is removed, so quoted node ids (the rolling recap) read as the source's.
  std::string openai_messages(const std::string& session, const std::string& head,
                              std::int64_t as_of = kLatest) {
    RenderOptions o;
    o.head = head;
    o.as_of = as_of;
    std::string text = dump_json(render_to_json(render_context(st(), session, o), RenderFormat::openai)["messages"]);
    if (session == "s" || !st().session(session) || st().session(session)->kind != "fork") return text;
    const std::string prefix = session + ":";
    for (std::size_t p; (p = text.find(prefix)) != std::string::npos;) text.erase(p, prefix.size());
    return text;
  }
  void expect_fork_clean(const std::string& fork) {
    Check c = check_fork_closure(st(), {fork});
    EXPECT_TRUE(c.ok);
    for (const auto& v : c.violations) ADD_FAILURE() << v.message;
    VerifyReport all = verify_invariants(st(), {fork});
    for (const auto& ch : all.checks)
      for (const auto& v : ch.violations) ADD_FAILURE() << ch.id << ": " << v.message;
  }
  std::set<std::string> node_ids(const std::string& session) {
    std::set<std::string> out;
    st().for_each_node(session, [&](const Node& n) {
      out.insert(n.id);
      return true;
    }, kLatest, false);
    return out;
  }

  fs::path dir_;
  std::optional<Store> store_;
};

TEST_F(ForkTest, CopiesOnlyThePathWithNewIdsAndLeavesTheSourceUntouched) {
  chain(6);
  msg("b4", "n3", false);  // a retry of n4: a sibling branch
  msg("b5", "b4", false);
  Snapshot before = take_snapshot(st(), "s");
  ForkOptions o;
  o.at = "n5";
  o.name = "f";
  ForkResult r = fork_session(st(), o);
  EXPECT_EQ(r.source_session, "s");
  EXPECT_EQ(r.session, "f");
  EXPECT_EQ(r.head, "f:n5");
  EXPECT_EQ(r.copied_nodes, 5);
  EXPECT_EQ(node_ids("f"), (std::set<std::string>{"f:n1", "f:n2", "f:n3", "f:n4", "f:n5"}));
  EXPECT_EQ(st().predecessor_of("f:n4"), std::optional<std::string>("f:n3"));
  EXPECT_EQ(st().predecessor_of("f:n1"), std::nullopt);
  auto s = st().session("f");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "fork");
  EXPECT_EQ(s->parent_session, std::optional<std::string>("s"));
  EXPECT_EQ(json_str(s->metadata, "forked_from"), "s");
  EXPECT_EQ(json_str(s->metadata, "at"), "n5");
  auto moves = st().head_moves("f");
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].cause, "fork");
  EXPECT_EQ(moves[0].node_id, "f:n5");
  auto copy = st().node("f:n2");
  EXPECT_EQ(copy->metadata["forked_from"], (Json{{"session", "s"}, {"id", "n2"}}));
  // The source: same state, same HEAD.
  Snapshot after = take_snapshot(st(), "s", before.boundary_seq);
  EXPECT_EQ(after.digest, before.digest);
  EXPECT_EQ(take_snapshot(st(), "s").digest, before.digest);
  EXPECT_EQ(st().head("s"), std::optional<std::string>("n6"));
  EXPECT_EQ(openai_messages("f", "f:n5"), openai_messages("s", "n5"));
  expect_fork_clean("f");
}

TEST_F(ForkTest, ForkOfTheSiblingBranchHoldsNoneOfTheMainBranch) {
  chain(6);
  msg("b4", "n3", false);
  msg("b5", "b4", false);
  ForkOptions o;
  o.at = "b5";
  ForkResult r = fork_session(st(), o);
  EXPECT_EQ(r.session.rfind("fork-", 0), 0u);
  std::set<std::string> want;
  for (const char* id : {"n1", "n2", "n3", "b4", "b5"}) want.insert(fork_node_id(r.session, id));
  EXPECT_EQ(node_ids(r.session), want);
  EXPECT_EQ(openai_messages(r.session, r.head), openai_messages("s", "b5"));
  // A second default fork at the same point gets another name.
  ForkResult r2 = fork_session(st(), o);
  EXPECT_NE(r2.session, r.session);
  expect_fork_clean(r.session);
  expect_fork_clean(r2.session);
}

TEST_F(ForkTest, PrefixSummaryIsCopiedWithRemappedCoverage) {
  chain(10);
  view("S", range(1, 4));
  ForkOptions o;
  o.at = "n7";
  o.name = "f";
  ForkResult r = fork_session(st(), o);
  ASSERT_EQ(r.copied_summaries.size(), 1u);
  EXPECT_EQ(r.copied_summaries[0], std::make_pair(std::string("S"), std::string("f:S")));
  EXPECT_TRUE(r.omitted_summaries.empty());
  auto s = st().node("f:S");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->covers_ids, (std::vector<std::string>{"f:n1", "f:n2", "f:n3", "f:n4"}));
  EXPECT_EQ(s->predecessor, std::nullopt);
  RenderOptions ro;
  Rendered fr = render_context(st(), "f", ro);
  EXPECT_EQ(fr.summary, std::optional<std::string>("f:S"));
  EXPECT_EQ(openai_messages("f", "f:n7"), openai_messages("s", "n7"));
  expect_fork_clean("f");
}

TEST_F(ForkTest, ForkInsideACoveredRangeGivesTheRawPath) {
  chain(10);
  view("S", range(1, 6));
  ForkOptions o;
  o.at = "n4";
  o.name = "f";
  ForkResult r = fork_session(st(), o);
  EXPECT_TRUE(r.copied_summaries.empty());
  ASSERT_EQ(r.omitted_summaries.size(), 1u);
  EXPECT_EQ(r.omitted_summaries[0].id, "S");
  EXPECT_EQ(r.omitted_summaries[0].reason, "crosses_fork_point");
  Rendered fr = render_context(st(), "f", RenderOptions{});
  EXPECT_FALSE(fr.summary);
  EXPECT_EQ(fr.reads, (std::vector<std::string>{"f:n1", "f:n2", "f:n3", "f:n4"}));
  EXPECT_EQ(openai_messages("f", "f:n4"), openai_messages("s", "n4"));
  expect_fork_clean("f");
}

TEST_F(ForkTest, SupersededSummaryIsNotResurrectedAsActive) {
  // S1 covers n1..n3, then S2 (the active one) covers n1..n8. At n5 S2 does not apply and S1 is
  // the summary in force (docs/render.md "Rendering at a node"): the fork takes S1 as its active
  // summary and renders what the source renders at n5.
  chain(10);
  view("S1", range(1, 3));
  view("S2", range(1, 8));
  ForkOptions o;
  o.at = "n5";
  o.name = "f";
  ForkResult r = fork_session(st(), o);
  ASSERT_EQ(r.copied_summaries.size(), 1u);
  ASSERT_EQ(r.omitted_summaries.size(), 1u);
  EXPECT_EQ(r.omitted_summaries[0].id, "S2");
  EXPECT_EQ(r.omitted_summaries[0].reason, "crosses_fork_point");
  EXPECT_EQ(render_context(st(), "f", RenderOptions{}).summary, std::optional<std::string>("f:S1"));
  EXPECT_EQ(openai_messages("f", "f:n5"), openai_messages("s", "n5"));
  expect_fork_clean("f");
  // At n9 S2 applies: both come along, S1 as the relic it is.
  o.at = "n9";
  o.name = "g";
  ForkResult r2 = fork_session(st(), o);
  EXPECT_EQ(r2.copied_summaries.size(), 2u);
  EXPECT_EQ(render_context(st(), "g", RenderOptions{}).summary, std::optional<std::string>("g:S2"));
  EXPECT_EQ(openai_messages("g", "g:n9"), openai_messages("s", "n9"));
  expect_fork_clean("g");
}

TEST_F(ForkTest, CrossingParentIsOmittedItsCompleteChildrenReused) {
  // An lcm-shaped tree: leaves L1 (n1..n2), L2 (n3..n4), L3 (n5..n6); parent P over n1..n6
  // with children [L1,L2,L3]; each leaf names P in metadata.parents.
  chain(8);
  Json leaf_meta = Json{{"strategy", "lcm"}, {"parents", Json::array({"P"})}};
  view("L1", range(1, 2), leaf_meta);
  view("L2", range(3, 4), leaf_meta);
  view("L3", range(5, 6), leaf_meta);
  view("P", range(1, 6), Json{{"strategy", "lcm"}, {"children", Json::array({"L1", "L2", "L3"})}});
  view("Q", range(1, 4), Json{{"strategy", "lcm"}, {"children", Json::array({"L1", "L2"})}});
  ForkOptions o;
  o.at = "n4";
  o.name = "f";
  ForkResult r = fork_session(st(), o);
  std::vector<std::string> copied;
  for (const auto& [from, id] : r.copied_summaries) copied.push_back(from);
  EXPECT_EQ(copied, (std::vector<std::string>{"L1", "L2", "Q"}));
  std::vector<std::string> omitted;
  for (const auto& om : r.omitted_summaries) omitted.push_back(om.id + ":" + om.reason);
  EXPECT_EQ(omitted, (std::vector<std::string>{"P:crosses_fork_point"}));  // L3 lies wholly after n4: not part of the path at all
  auto l1 = st().node("f:L1");
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->metadata["parents"], Json::array());  // P was not copied
  EXPECT_EQ(l1->metadata["fork"]["dropped_refs"], Json::array({"P"}));
  EXPECT_EQ(st().node("f:Q")->metadata["children"], Json::array({"f:L1", "f:L2"}));
  EXPECT_EQ(st().node("f:L2")->covers_ids, (std::vector<std::string>{"f:n3", "f:n4"}));
  EXPECT_EQ(openai_messages("f", "f:n4"), openai_messages("s", "n4"));
  Check c = check_fork_closure(st(), {"f"});
  EXPECT_TRUE(c.ok);
}

TEST_F(ForkTest, BadInputWritesNothing) {
  chain(4);
  st().create_session(SessionInfo{"other"});
  msg("x1", std::nullopt, true, "other");
  std::int64_t boundary = st().max_seq();
  std::size_t sessions = st().sessions().size();
  auto expect_error = [&](ForkOptions o, Exit exit, const std::string& code) {
    try {
      fork_session(st(), o);
      ADD_FAILURE() << "no error for --at " << o.at;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit(), exit) << e.what();
      EXPECT_EQ(e.code(), code) << e.what();
    }
    EXPECT_EQ(st().max_seq(), boundary);
    EXPECT_EQ(st().sessions().size(), sessions);
  };
  expect_error(ForkOptions{"nope", std::nullopt, std::nullopt}, Exit::bad_input, "node.unknown");
  expect_error(ForkOptions{"x1", std::string("s"), std::nullopt}, Exit::usage, "node.other_session");
  expect_error(ForkOptions{"n2", std::nullopt, std::string("other")}, Exit::bad_input, "session.exists");
  ForkOptions ok{"n2", std::nullopt, std::string("f")};
  fork_session(st(), ok);
  boundary = st().max_seq();
  sessions = st().sessions().size();
  expect_error(ok, Exit::bad_input, "session.exists");  // --name reuse
}

TEST_F(ForkTest, ClosureCatchesAReferenceIntoTheSource) {
  chain(4);
  SessionInfo bad;
  bad.id = "bad";
  bad.kind = "fork";
  bad.parent_session = "s";
  bad.metadata = Json{{"forked_from", "s"}, {"at", "n2"}};
  st().create_session(bad);
  msg("bad:n1", std::nullopt, false, "bad");
  msg("bad:n2", "n1", false, "bad");  // predecessor in the source: not closed
  st().move_head("bad", "bad:n2", "fork");
  Check c = check_fork_closure(st(), {"bad"});
  EXPECT_FALSE(c.ok);
  bool named = false;
  for (const auto& v : c.violations) named = named || v.message.find("predecessor 'n1'") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST_F(ForkTest, ClosureCatchesADifferentRender) {
  chain(4);
  SessionInfo bad;
  bad.id = "bad";
  bad.kind = "fork";
  bad.parent_session = "s";
  bad.metadata = Json{{"forked_from", "s"}, {"at", "n3"}};
  st().create_session(bad);
  msg("bad:n1", std::nullopt, false, "bad");
  msg("bad:n3", "bad:n1", false, "bad");  // n2 left out
  st().move_head("bad", "bad:n3", "fork");
  Check c = check_fork_closure(st(), {"bad"});
  EXPECT_FALSE(c.ok);
}

TEST_F(ForkTest, LaterAppendsAndCompactionsOfEitherSideKeepTheForkClosed) {
  chain(6);
  ForkOptions o;
  o.at = "n4";
  o.name = "f";
  fork_session(st(), o);
  msg("n7", "n6");
  msg("f:n5x", "f:n4", true, "f");
  view("S", range(1, 6));  // the source compacts after the fork
  expect_fork_clean("f");
}

TEST_F(ForkTest, RewindMovesBackAlongTheSpineAndRecordsIt) {
  chain(6);
  RewindResult r = rewind_head(st(), "s", RewindOptions{std::nullopt, 2});
  EXPECT_EQ(r.previous, "n6");
  EXPECT_EQ(r.head, "n4");
  EXPECT_TRUE(r.moved);
  EXPECT_EQ(st().head_moves("s").back().cause, "rewind");
  r = rewind_head(st(), "s", RewindOptions{std::string("n1"), 1});
  EXPECT_EQ(r.head, "n1");
  EXPECT_EQ(r.steps, 3);
  // n5 is not on the spine of HEAD n1.
  try {
    rewind_head(st(), "s", RewindOptions{std::string("n5"), 1});
    ADD_FAILURE() << "rewind to a descendant";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "rewind.not_on_spine");
  }
  try {
    rewind_head(st(), "s", RewindOptions{std::nullopt, 1});
    ADD_FAILURE() << "rewind past the root";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "rewind.out_of_range");
  }
  EXPECT_EQ(st().head("s"), std::optional<std::string>("n1"));
  VerifyReport rep = verify_invariants(st(), {"s"});
  for (const auto& ch : rep.checks)
    for (const auto& v : ch.violations) ADD_FAILURE() << ch.id << ": " << v.message;
}

TEST_F(ForkTest, RewindIntoACoveredRangeRendersRaw) {
  chain(8);
  view("S", range(1, 4));
  EXPECT_TRUE(render_context(st(), "s", RenderOptions{}).summary);
  rewind_head(st(), "s", RewindOptions{std::string("n3"), 1});
  Rendered r = render_context(st(), "s", RenderOptions{});
  EXPECT_FALSE(r.summary);
  EXPECT_EQ(r.reads, range(1, 3));
}

// ---------------------------------------------------------------- real transcripts

const std::string kClaude = std::string(CTXFOLD_TRANSCRIPTS_DIR) + "/claude-code";
const std::string kBranch = kClaude + "/images_resume_branch_v2.1.22-2.1.29/47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl";
const std::string kAuto = kClaude + "/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl";
const std::string kManual = kClaude + "/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";

class ForkRealTest : public ForkTest {
 protected:
  std::string import(const std::string& path) {
    if (!fs::exists(path)) return {};
    import_paths(st(), {path}, ImportOptions{});
    for (const auto& s : st().sessions())
      if (s.kind == "main" && s.id != "s" && st().node_count(s.id) > 0) return s.id;
    return {};
  }
  /// The message nodes of HEAD's spine, root first.
  std::vector<std::string> spine(const std::string& session) {
    std::vector<std::string> out;
    std::optional<std::string> cur = st().head(session);
    while (cur) {
      out.push_back(*cur);
      cur = st().predecessor_of(*cur);
    }
    return {out.rbegin(), out.rend()};
  }
  /// Forks at `at` and checks the Done-when of issue 5: same provider messages as the source's
  /// render --head at, nothing off the path, verifies clean.
  ForkResult fork_and_check(const std::string& session, const std::string& at) {
    ForkOptions o;
    o.at = at;
    ForkResult r = fork_session(st(), o);
    EXPECT_EQ(openai_messages(r.session, r.head), openai_messages(session, at)) << "fork at " << at;
    std::set<std::string> path;
    for (std::optional<std::string> cur = at; cur; cur = st().predecessor_of(*cur)) path.insert(*cur);
    st().for_each_node(r.session, [&](const Node& n) {
      std::string from = n.metadata["forked_from"]["id"].get<std::string>();
      if (!n.is_view()) EXPECT_TRUE(path.count(from)) << from << " is not on the path to " << at;
      return true;
    }, kLatest, false);
    expect_fork_clean(r.session);
    return r;
  }
};

TEST_F(ForkRealTest, BranchedTranscriptForkAtMidSessionNodes) {
  std::string s = import(kBranch);
  if (s.empty()) GTEST_SKIP() << "no transcript " << kBranch;
  // Every node with two children is a real branch point; fork one message into each branch.
  std::vector<std::string> branch_points;
  st().for_each_node(s, [&](const Node& n) {
    if (st().children(n.id).size() > 1) branch_points.push_back(n.id);
    return true;
  }, kLatest, false);
  ASSERT_FALSE(branch_points.empty()) << "the transcript was expected to hold a branch";
  int forks = 0;
  for (const auto& bp : branch_points) {
    for (const auto& child : st().children(bp)) {
      auto n = st().node(child, false);
      if (n->is_view()) continue;
      ForkResult r = fork_and_check(s, child);
      // None of the sibling branches came along.
      for (const auto& sibling : st().children(bp))
        if (sibling != child) EXPECT_FALSE(st().has_node(fork_node_id(r.session, sibling)));
      ++forks;
    }
  }
  EXPECT_GE(forks, 2);
  // And one fork in the middle of HEAD's spine.
  auto sp = spine(s);
  ASSERT_GT(sp.size(), 4u);
  fork_and_check(s, sp[sp.size() / 2]);
}

TEST_F(ForkRealTest, CompactedTranscriptsForkBeforeInsideAndAfterCoverage) {
  for (const std::string& path : {kAuto, kManual}) {
    std::string s = import(path);
    if (s.empty()) continue;
    auto views = st().view_nodes(s, kind::kSummary, kLatest, true);
    ASSERT_FALSE(views.empty()) << path << " was expected to hold a compaction";
    auto sp = spine(s);
    ASSERT_GT(sp.size(), 4u);
    const Node& first = views.front();
    // Inside the first summary's coverage: raw path, the summary omitted.
    ForkResult inside = fork_and_check(s, first.covers_ids[first.covers_ids.size() / 2]);
    bool omitted = false;
    for (const auto& o : inside.omitted_summaries) omitted = omitted || o.id == first.id;
    EXPECT_TRUE(omitted) << path;
    // HEAD and the middle of the spine.
    ForkResult at_head = fork_and_check(s, sp.back());
    fork_and_check(s, sp[sp.size() / 2]);
    // At HEAD the active summary (if the source renders one) comes along and renders.
    RenderOptions ro;
    Rendered src = render_context(st(), s, ro);
    if (src.summary)
      EXPECT_EQ(render_context(st(), at_head.session, ro).summary, std::optional<std::string>(fork_node_id(at_head.session, *src.summary)));
  }
}

}  // namespace
}  // namespace ctxfold
