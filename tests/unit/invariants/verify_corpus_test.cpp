// The corrupted-database corpus of issue 6 (docs/invariants.md): a healthy database made from a real
// Claude Code transcript (import, a fork, two rolling compactions), and for each invariant a copy
// broken in exactly one place with raw sqlite3 (the append-only triggers dropped on the copy).
// Each break must be caught by its own invariant and by no unrelated one; where a break
// legitimately trips a second check, the test says why.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <set>

#include "import/import.hpp"
#include "invariants/report.hpp"
#include "invariants/verify.hpp"
#include "render/render.hpp"
#include "session/fork.hpp"
#include "store/store.hpp"
#include "forced_options.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "summarize/extractive.hpp"
#include "util/error.hpp"
#include "session/open.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

const char* kTranscript =
    CTXFOLD_TRANSCRIPTS_DIR
    "/claude-code/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";

using Ids = std::set<std::string>;

class VerifyCorpus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(kTranscript)) return;
    dir_ = fs::temp_directory_path() / ("ctxfold-verify-corpus-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    healthy_ = (dir_ / "healthy.db").string();
    Store st = open_store(healthy_, Store::Mode::read_write);
    ImportResult imp = import_paths(st, {kTranscript}, ImportOptions{});
    main_ = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    // The fork comes before the compactions, so its I9 comparison (the source rendered at the
    // fork boundary) never sees the summaries broken below.
    ForkOptions fo;
    fo.at = *st.head(main_);
    fo.session = main_;
    fo.name = "corpus-fork";
    ForkResult fr = fork_session(st, fo);
    fork_ = fr.session;
    // A second fork holds an lcm tree (leaves and parents) for the I8 case; lcm writes after the
    // fork point, so the fork's I9 comparison at its boundary does not see it.
    fo.name = "corpus-lcm";
    lcm_session_ = fork_session(st, fo).session;
    ExtractiveSummarizer ex;
    // Two windows above the ~38.6k tokens this session's requests measured beyond its transcript.
    CompactResult c1 = compact_rolling(st, main_, ex, testing_env::forced_rolling(60000));
    CompactResult c2 = compact_rolling(st, main_, ex, testing_env::forced_rolling(45000));
    CompactResult c3 = compact_lcm(st, lcm_session_, ex, testing_env::forced_small_lcm());
    status_ = c1.status + "/" + c2.status + "/" + c3.status;
    for (const auto& id : c3.details["parents"]) lcm_parents_.push_back(id.get<std::string>());
    if (c1.summary_id) sum1_ = *c1.summary_id;
    if (c2.summary_id) sum2_ = *c2.summary_id;
    if (c2.compaction) compaction2_ = *c2.compaction;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (!fs::exists(kTranscript)) GTEST_SKIP() << "no transcript at " << kTranscript;
    ASSERT_EQ(status_, "compacted/compacted/compacted");
    ASSERT_FALSE(lcm_parents_.empty());
    ASSERT_FALSE(sum1_.empty());
    ASSERT_FALSE(sum2_.empty());
  }

  static std::string copy(const std::string& name) {
    std::string out = (dir_ / (name + ".db")).string();
    fs::remove(out);
    sqlite3 *src = nullptr, *dst = nullptr;
    EXPECT_EQ(sqlite3_open_v2(healthy_.c_str(), &src, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_open(out.c_str(), &dst), SQLITE_OK);
    sqlite3_backup* b = sqlite3_backup_init(dst, "main", src, "main");
    EXPECT_NE(b, nullptr);
    sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    sqlite3_close(src);
    sqlite3_close(dst);
    return out;
  }

  static void sql(const std::string& db, const std::string& statements) {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(h, statements.c_str(), nullptr, nullptr, &err);
    std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(h);
    ASSERT_EQ(rc, SQLITE_OK) << msg << "\n" << statements;
  }

  static std::string q(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }

  /// Reads from the healthy database.
  static Store healthy() { return open_store(healthy_, Store::Mode::read_only); }
  static std::vector<std::string> column(const std::string& query) {
    Store st = healthy();
    std::vector<std::string> out;
    auto s = st.db().prepare(query);
    while (s.step()) out.push_back(s.text(0));
    return out;
  }

  /// The digest a node would have after `change`: what a careful forger writes so that only the
  /// invariant under test sees the break.
  template <class F>
  static std::string digest_after(const std::string& id, F change) {
    Store st = healthy();
    Node n = *st.node(id, true);
    change(n);
    n.metadata.erase("covers");
    return node_digest(n);
  }

  static VerifyReport verify(const std::string& db) {
    Store st = open_store(db, Store::Mode::read_only);
    std::vector<std::string> sessions;
    for (const auto& s : st.sessions()) sessions.push_back(s.id);
    return verify_invariants(st, sessions);
  }

  static Ids failing(const VerifyReport& r) {
    Ids ids;
    for (const auto& c : r.checks)
      if (!c.ok) ids.insert(c.id);
    return ids;
  }

  static std::string describe(const VerifyReport& r) {
    std::string s;
    for (const auto& c : r.checks)
      for (const auto& v : c.violations) s += c.id + " [" + v.session + "] " + v.message + "\n";
    return s;
  }

  /// Off-spine leaves of the main session: no children, never HEAD, covered by nothing.
  static std::vector<std::string> dead_leaves() {
    return column("SELECT id FROM nodes n WHERE session=" + q(main_) +
                  " AND NOT EXISTS (SELECT 1 FROM nodes c WHERE c.predecessor=n.id)"
                  " AND NOT EXISTS (SELECT 1 FROM head_moves h WHERE h.node_id=n.id)"
                  " AND NOT EXISTS (SELECT 1 FROM covers v WHERE v.node_id=n.id) ORDER BY seq");
  }

  static std::int64_t seq_of(const std::string& id) {
    Store st = healthy();
    return st.node(id, false)->seq;
  }

  static inline fs::path dir_;
  static inline std::string healthy_, main_, fork_, lcm_session_, sum1_, sum2_, compaction2_, status_;
  static inline std::vector<std::string> lcm_parents_;
};

TEST_F(VerifyCorpus, HealthyDatabasePasses) {
  VerifyReport r = verify(healthy_);
  EXPECT_TRUE(r.ok) << describe(r);
  EXPECT_GE(r.sessions.size(), 3u);  // main, its sidechains, the fork
  for (const auto& c : r.checks) {
    EXPECT_FALSE(c.source.empty()) << c.id;
    EXPECT_EQ(c.source, "docs/invariants.md \"" + c.id + "\"") << c.source;
  }
  // --quick agrees and skips the render-based checks.
  Store st = healthy();
  VerifyOptions o;
  o.quick = true;
  VerifyReport qr = verify_invariants(st, r.sessions, o);
  EXPECT_TRUE(qr.ok) << describe(qr);
  Ids skipped;
  for (const auto& c : qr.checks)
    if (c.skipped) skipped.insert(c.id);
  EXPECT_EQ(skipped, (Ids{"I4", "I5", "I9", "I10"}));
}

TEST_F(VerifyCorpus, ChangedNodeIsI1) {
  // A message of a sidechain: nothing else renders or compares it.
  auto ids = column("SELECT id FROM nodes WHERE session<>" + q(main_) + " AND session<>" + q(fork_) +
                    " AND kind='message' ORDER BY seq LIMIT 1");
  ASSERT_FALSE(ids.empty());
  std::string db = copy("changed");
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET content='[{\"type\":\"text\",\"text\":\"tampered\"}]' WHERE id=" +
              q(ids[0]));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I1"})) << describe(r);
}

TEST_F(VerifyCorpus, DeletedLeafIsI1) {
  // A leaf off every spine: no child loses its predecessor (that would be I2 too).
  auto leaves = dead_leaves();
  ASSERT_FALSE(leaves.empty());
  std::string db = copy("deleted");
  sql(db, "DROP TRIGGER nodes_no_delete; DELETE FROM nodes WHERE id=" + q(leaves[0]));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I1"})) << describe(r);
}

TEST_F(VerifyCorpus, CycleIsI2) {
  auto leaves = dead_leaves();
  ASSERT_GE(leaves.size(), 2u);
  const std::string& id = leaves[1];
  std::string digest = digest_after(id, [&](Node& n) { n.predecessor = id; });
  std::string db = copy("cycle");
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET predecessor=" + q(id) + ", digest=" + q(digest) +
              " WHERE id=" + q(id));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I2"})) << describe(r);
}

TEST_F(VerifyCorpus, DanglingPredecessorIsI2AndTheForeignKey) {
  // nodes.predecessor REFERENCES nodes(id): SQLite's own foreign_key_check (I11) reports the very
  // same dangling reference, so the expected set is {I2, I11} by construction of the schema.
  auto leaves = dead_leaves();
  ASSERT_GE(leaves.size(), 3u);
  const std::string& id = leaves[2];
  std::string digest = digest_after(id, [&](Node& n) { n.predecessor = "no-such-node"; });
  std::string db = copy("dangling");
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET predecessor='no-such-node', digest=" + q(digest) +
              " WHERE id=" + q(id));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I2", "I11"})) << describe(r);
}

/// Rewrites a summary's covers rows to `covers` (positions renumbered, columns and digest kept
/// consistent so I1 sees nothing).
std::string rewrite_covers_sql(const std::string& id, std::int64_t seq, const std::vector<std::string>& covers,
                               const std::string& digest) {
  auto q = [](const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  };
  std::string s = "DROP TRIGGER covers_no_delete; DROP TRIGGER nodes_no_update; DELETE FROM covers WHERE summary_seq=" +
                  std::to_string(seq) + ";";
  for (std::size_t i = 0; i < covers.size(); ++i)
    s += "INSERT INTO covers(summary_seq,pos,node_id) VALUES(" + std::to_string(seq) + "," + std::to_string(i) + "," +
         q(covers[i]) + ");";
  s += "UPDATE nodes SET covers_first=" + q(covers.front()) + ", covers_last=" + q(covers.back()) +
       ", covers_count=" + std::to_string(covers.size()) + ", digest=" + q(digest) + " WHERE id=" + q(id) + ";";
  return s;
}

TEST_F(VerifyCorpus, GapInCoversIsI3) {
  // The superseded summary: no render consults it (I5, I10 unaffected) and it was written after
  // the fork (I9 unaffected). Dropping a middle id leaves first/last/count consistent for I1.
  Store st = healthy();
  std::vector<std::string> cov = st.node(sum1_, true)->covers_ids;
  ASSERT_GE(cov.size(), 3u);
  cov.erase(cov.begin() + static_cast<std::ptrdiff_t>(cov.size() / 2));
  std::string digest = digest_after(sum1_, [&](Node& n) { n.covers_ids = cov; });
  std::string db = copy("gap");
  sql(db, rewrite_covers_sql(sum1_, seq_of(sum1_), cov, digest));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I3"})) << describe(r);
}

TEST_F(VerifyCorpus, SummaryEndingOnADeadBranchIsI3) {
  // The active summary's last covered id now names a node of a dead branch. I3 reports the
  // broken segment. I5 holds, and must: the coverage is not wholly on HEAD's spine, so the
  // summary is not applied and HEAD renders raw (docs/invariants.md "I5": a branch that does not hold
  // a whole covered segment renders raw), asserted below; I4 holds as no other summary is consulted.
  Store st = healthy();
  std::vector<std::string> cov = st.node(sum2_, true)->covers_ids;
  auto leaves = dead_leaves();
  ASSERT_FALSE(leaves.empty());
  cov.back() = leaves[0];
  std::string digest = digest_after(sum2_, [&](Node& n) { n.covers_ids = cov; });
  std::string db = copy("dead_branch_last");
  sql(db, rewrite_covers_sql(sum2_, seq_of(sum2_), cov, digest));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I3"})) << describe(r);
  Store broken = open_store(db, Store::Mode::read_only);
  EXPECT_FALSE(render_context(broken, main_, RenderOptions{}).summary.has_value());
}

TEST_F(VerifyCorpus, SummaryCoveringADeadBranchInsideIsI3AndI5) {
  // A dead-branch node in the middle of the active summary's coverage, first and last still on
  // the spine. I3 reports the broken segment. I5 fires too, legitimately: the renderer decides
  // "the segment is on the spine" from its edges, which is exact only for a contiguous segment
  // (what I3 guarantees); on this ledger it applies the summary, and the rendered context then
  // really does drop a spine node and stand in for an off-spine one, which is I5's finding about
  // the context a model would read. Both reports are about this one break.
  Store st = healthy();
  std::vector<std::string> cov = st.node(sum2_, true)->covers_ids;
  ASSERT_GE(cov.size(), 3u);
  auto leaves = dead_leaves();
  ASSERT_FALSE(leaves.empty());
  cov[cov.size() / 2] = leaves[0];
  std::string digest = digest_after(sum2_, [&](Node& n) { n.covers_ids = cov; });
  std::string db = copy("dead_branch_mid");
  sql(db, rewrite_covers_sql(sum2_, seq_of(sum2_), cov, digest));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I3", "I5"})) << describe(r);
}

TEST_F(VerifyCorpus, TwoActiveRollingSummariesIsI4) {
  // The newer compaction claims to supersede the summary the older one had already superseded:
  // two compactions started from the same state and each made its summary active (the race the
  // commit-time recheck of the compaction bracket prevents, docs/strategies.md "The compaction
  // bracket").
  Store st = healthy();
  Node s1 = *st.node(sum1_, false);
  std::string previous = json_str(s1.metadata, "supersedes");
  ASSERT_FALSE(previous.empty());
  std::string digest = digest_after(sum2_, [&](Node& n) { n.metadata["supersedes"] = previous; });
  std::string db = copy("two_active");
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET metadata=json_set(metadata,'$.supersedes'," + q(previous) +
              "), digest=" + q(digest) + " WHERE id=" + q(sum2_));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I4"})) << describe(r);
}

TEST_F(VerifyCorpus, SplitToolPairAtASummaryEdgeIsI3) {
  // The superseded summary (not rendered, written after the fork) now ends right after a tool
  // call whose result stays outside its coverage.
  Store st = healthy();
  std::vector<std::string> cov = st.node(sum1_, true)->covers_ids;
  std::optional<std::size_t> cut;
  for (std::size_t k = cov.size(); k-- > 1;) {
    Node n = *st.node(cov[k - 1], false);
    bool has_use = false;
    for (const auto& b : n.content)
      if (json_str(b, "type") == "tool_use") has_use = true;
    if (has_use) {
      cut = k;  // keep cov[0..k-1]: the call is inside, its result (later) outside
      break;
    }
  }
  ASSERT_TRUE(cut.has_value());
  cov.resize(*cut);
  std::string digest = digest_after(sum1_, [&](Node& n) { n.covers_ids = cov; });
  std::string db = copy("split_pair");
  sql(db, rewrite_covers_sql(sum1_, seq_of(sum1_), cov, digest));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I3"})) << describe(r);
}

TEST_F(VerifyCorpus, HeadMoveCausedByACompactionIsI6) {
  std::string db = copy("head_move");
  sql(db, "DROP TRIGGER head_moves_no_update; UPDATE head_moves SET cause='compact' WHERE seq=(SELECT max(seq) FROM "
          "head_moves WHERE session=" +
              q(main_) + ")");
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I6"})) << describe(r);
}

TEST_F(VerifyCorpus, OrphanCompactStartThatLandedASummaryIsI7) {
  ASSERT_FALSE(compaction2_.empty());
  std::string db = copy("orphan_start");
  sql(db, "DROP TRIGGER events_no_delete; DELETE FROM events WHERE type='compact/end' AND ref=" + q(compaction2_));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I7"})) << describe(r);
}

TEST_F(VerifyCorpus, ForkReferencingItsSourceIsI9) {
  // A fork node's metadata id list names the source's node instead of the fork's copy. The
  // predecessor is left alone: a cross-session predecessor would be I2's finding as well.
  Store st = healthy();
  std::string head = *st.head(fork_);
  Node n = *st.node(head, false);
  std::string source_id = json_str(n.metadata["forked_from"], "id");
  ASSERT_FALSE(source_id.empty());
  std::string digest = digest_after(head, [&](Node& m) { m.metadata["parent_ids"] = Json::array({source_id}); });
  std::string db = copy("fork_refs");
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET metadata=json_set(metadata,'$.parent_ids',json_array(" +
              q(source_id) + ")), digest=" + q(digest) + " WHERE id=" + q(head));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I9"})) << describe(r);
}

TEST_F(VerifyCorpus, LcmParentRangeIsI8) {
  // An lcm parent whose child list no longer matches its range: its last child is dropped from
  // metadata.children (digest recomputed), so the children's union ends before the parent's
  // covers do. The covers themselves are untouched, so I3 (a contiguous, balanced segment) and
  // the renders (I5, I10) see nothing; only the tree invariant does.
  const std::string parent = lcm_parents_.front();
  Store st = healthy();
  Node p = *st.node(parent, false);
  Json children = p.metadata["children"];
  ASSERT_GE(children.size(), 2u);
  children.erase(children.size() - 1);
  std::string digest = digest_after(parent, [&](Node& n) { n.metadata["children"] = children; });
  std::string db = copy("lcm_parent_range");
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET metadata=json_set(metadata,'$.children',json(" +
              q(dump_json(children)) + ")), digest=" + q(digest) + " WHERE id=" + q(parent));
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), (Ids{"I8"})) << describe(r);
  bool named = false;
  for (const auto& c : r.checks)
    for (const auto& v : c.violations)
      named = named || (c.id == "I8" && v.message.find("not the union of its children") != std::string::npos &&
                        std::find(v.nodes.begin(), v.nodes.end(), parent) != v.nodes.end());
  EXPECT_TRUE(named) << describe(r);
}

// ---------------------------------------------------------------- bad input (exit 3)

int open_and_verify(const std::string& path) {
  try {
    Store st = open_store(path, Store::Mode::read_only);
    std::vector<std::string> sessions;
    for (const auto& s : st.sessions()) sessions.push_back(s.id);
    return verify_invariants(st, sessions).ok ? 0 : 1;
  } catch (const Error& e) {
    return static_cast<int>(e.exit());
  }
}

TEST_F(VerifyCorpus, BadInputFilesAreExit3) {
  std::string text = (dir_ / "text.db").string();
  std::ofstream(text) << "this is not sqlite\n";
  EXPECT_EQ(open_and_verify(text), 3);

  std::string other = (dir_ / "other.db").string();
  sql(other, "CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts(name) VALUES('x');");
  EXPECT_EQ(open_and_verify(other), 3);

  std::string newer = copy("newer");
  sql(newer, "PRAGMA user_version=" + std::to_string(schema_version() + 1));
  EXPECT_EQ(open_and_verify(newer), 3);

  std::string truncated = copy("truncated");
  auto size = fs::file_size(truncated);
  fs::resize_file(truncated, size / 2);
  EXPECT_EQ(open_and_verify(truncated), 3);

  EXPECT_EQ(open_and_verify((dir_ / "missing.db").string()), 4);
}

TEST_F(VerifyCorpus, JunitNamesEverySessionAndEscapes) {
  VerifyReport r = verify(healthy_);
  std::string xml = verify_to_junit({VerifiedDb{"a&b<c>.db", r, {}, {}}});
  EXPECT_NE(xml.find("<testsuite name=\"a&amp;b&lt;c&gt;.db\""), std::string::npos);
  EXPECT_NE(xml.find("classname=\"(database)\" name=\"I11 SQLite integrity\""), std::string::npos);
  EXPECT_NE(xml.find("classname=\"" + fork_ + "\" name=\"I9 fork closure\""), std::string::npos);
  EXPECT_EQ(xml_escape(std::string("a\x01\xff\"'")), "a\xEF\xBF\xBD\xEF\xBF\xBD&quot;&apos;");
}

}  // namespace
}  // namespace ctxfold
