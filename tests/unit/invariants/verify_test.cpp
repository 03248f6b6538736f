#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "invariants/verify.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

/// Builds a healthy database through the Store, then breaks one invariant at a time on a copy by
/// going around the triggers with the raw sqlite3 API, and checks that exactly that check fails.
class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-verify-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "good.db").string();
    build();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Json txt(const std::string& t) { return Json::array({Json{{"type", "text"}, {"text", t}}}); }

  static void put(Store& st, const std::string& session, const std::string& id, std::optional<std::string> pred,
                  const std::string& role, Json content, const std::string& k = kind::kMessage,
                  std::vector<std::string> covers = {}, Json meta = Json::object()) {
    Node n;
    n.id = id;
    n.session = session;
    n.predecessor = std::move(pred);
    n.kind = k;
    n.role = role;
    n.content = std::move(content);
    n.covers_ids = std::move(covers);
    n.metadata = std::move(meta);
    ASSERT_EQ(st.append(n), AppendResult::added) << id;
  }

  /// Session "s": sys, u1..a6 with a tool call/result pair, an event, a side branch "side" off u2,
  /// a rolling summary over u1..a2 spliced at sys; HEAD at a6. Session "o": two nodes.
  void build() {
    Store st = open_store(path_, Store::Mode::read_write);
    Txn txn(st.db());
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"o"});
    put(st, "s", "sys", std::nullopt, "system", txt("be brief"));
    st.move_head("s", "sys", "import");
    put(st, "s", "u1", "sys", "user", txt("hello"));
    put(st, "s", "a1", "u1", "assistant", txt("hi"));
    put(st, "s", "u2", "a1", "user", txt("list files"));
    put(st, "s", "a2", "u2", "assistant",
        Json::array({Json{{"type", "tool_use"}, {"id", "T1"}, {"name", "Bash"}, {"input", {{"cmd", "ls"}}}}}));
    put(st, "s", "r2", "a2", "tool",
        Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "T1"}, {"content", "a b"}, {"is_error", false}}}));
    put(st, "s", "side", "u2", "assistant", txt("a retry that was abandoned"));
    put(st, "s", "ev", "r2", "", txt("progress"), kind::kEvent);
    put(st, "s", "u3", "ev", "user", txt("thanks"));
    put(st, "s", "a3", "u3", "assistant", txt("welcome"));
    put(st, "s", "u4", "a3", "user", txt("more"));
    put(st, "s", "a4", "u4", "assistant", txt("sure"));
    put(st, "s", "S", "sys", "user", txt("the user greeted and listed files"), kind::kSummary,
        {"u1", "a1", "u2", "a2", "r2"}, Json{{"strategy", "rolling"}});
    st.move_head("s", "a4", "append");
    put(st, "o", "o1", std::nullopt, "user", txt("other"));
    put(st, "o", "o2", "o1", "assistant", txt("session"), kind::kMessage, {},
        Json{{"source", {{"format", "x"}}}});
    put(st, "o", "o3", std::nullopt, "user", txt("orphan child"), kind::kMessage, {},
        Json{{"missing_predecessor", "never-written"}});
    st.move_head("o", "o3", "import");
    txn.commit();
  }

  /// A byte copy through the backup API, to be broken with the raw sqlite3 API.
  std::string copy(const std::string& name) {
    std::string out = (dir_ / name).string();
    sqlite3 *src = nullptr, *dst = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &src, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
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
    ASSERT_EQ(rc, SQLITE_OK) << msg;
  }

  static VerifyReport verify(const std::string& db, std::vector<std::string> sessions = {"s", "o"}) {
    Store st = open_store(db, Store::Mode::read_only);
    return verify_invariants(st, sessions);
  }

  static const Check& check(const VerifyReport& r, const std::string& id) {
    for (const auto& c : r.checks)
      if (c.id == id) return c;
    static Check none;
    ADD_FAILURE() << "no check " << id;
    return none;
  }

  static std::vector<std::string> failing(const VerifyReport& r) {
    std::vector<std::string> ids;
    for (const auto& c : r.checks)
      if (!c.ok) ids.push_back(c.id);
    return ids;
  }

  static std::string all_messages(const Check& c) {
    std::string s;
    for (const auto& v : c.violations) s += v.message + "\n";
    return s;
  }

  static std::string read_bytes(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(VerifyTest, HealthyDatabasePassesEveryCheck) {
  VerifyReport r = verify(path_);
  EXPECT_TRUE(r.ok);
  std::vector<std::string> ids;
  for (const auto& c : r.checks) {
    ids.push_back(c.id);
    EXPECT_TRUE(c.ok) << c.id << ": " << all_messages(c);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "I9", "I10", "I11"}));
  // The imported root with a missing parent is a warning, not a violation.
  const Check& i2 = check(r, "I2");
  ASSERT_EQ(i2.warnings.size(), 1u);
  EXPECT_EQ(i2.warnings[0].session, "o");
  EXPECT_EQ(i2.warnings[0].nodes, std::vector<std::string>{"o3"});
  EXPECT_NE(i2.warnings[0].message.find("never-written"), std::string::npos);
  // The summary is applied on HEAD's render, with nothing repaired.
  Store st = open_store(path_, Store::Mode::read_only);
  Rendered rd = render_context(st, "s", RenderOptions{});
  EXPECT_EQ(rd.reads, (std::vector<std::string>{"sys", "S", "u3", "a3", "u4", "a4"}));
  EXPECT_TRUE(check(r, "I5").warnings.empty());
}

TEST_F(VerifyTest, ReadOnlyAndLeavesTheFileUntouched) {
  std::string before = read_bytes(path_);
  VerifyReport r = verify(path_);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(read_bytes(path_), before);
  Json j = verify_to_json(r);
  EXPECT_EQ(j["schema"], "ctxfold.verify/1");
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["sessions"], (Json{"s", "o"}));
  EXPECT_EQ(j["checks"][0]["id"], "I1");
  EXPECT_EQ(j["checks"][0]["name"], "append-only ledger");
  EXPECT_EQ(j["checks"][1]["warnings"][0]["nodes"], Json{"o3"});
}

TEST_F(VerifyTest, I1ChangedNodeContent) {
  std::string db = copy("i1.db");
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET content='[{\"type\":\"text\",\"text\":\"HELLO\"}]' "
          "WHERE id='u3';");
  VerifyReport r = verify(db);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(failing(r), std::vector<std::string>{"I1"});
  const Check& c = check(r, "I1");
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_EQ(c.violations[0].session, "s");
  EXPECT_EQ(c.violations[0].nodes, std::vector<std::string>{"u3"});
  EXPECT_NE(c.violations[0].message.find("changed after it was written"), std::string::npos);
}

TEST_F(VerifyTest, I1VanishedNode) {
  std::string db = copy("i1v.db");
  sql(db, "DROP TRIGGER nodes_no_delete; DELETE FROM nodes WHERE id='side';");
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), std::vector<std::string>{"I1"});
  EXPECT_NE(all_messages(check(r, "I1")).find("vanished"), std::string::npos) << all_messages(check(r, "I1"));
}

TEST_F(VerifyTest, I1ChangedCoverage) {
  std::string db = copy("i1c.db");
  // Drop the last covered id (r2) from the summary's list: the summary's digest no longer matches.
  sql(db, "DROP TRIGGER covers_no_delete; DELETE FROM covers WHERE node_id='r2';");
  VerifyReport r = verify(db);
  EXPECT_EQ(check(r, "I1").ok, false);
  EXPECT_NE(all_messages(check(r, "I1")).find("'S'"), std::string::npos);
}

// A predecessor cycle with a consistent digest: only the DAG check fails, and nothing loops.
TEST_F(VerifyTest, I2PredecessorCycle) {
  std::string db = copy("i2.db");
  Node o1;
  {
    Store st = open_store(db, Store::Mode::read_only);
    o1 = *st.node("o1");
  }
  o1.predecessor = "o2";
  o1.metadata.erase("covers");
  std::string digest = node_digest(o1);
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET predecessor='o2', digest='" + digest + "' WHERE id='o1';");
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), std::vector<std::string>{"I2"});
  std::string msgs = all_messages(check(r, "I2"));
  EXPECT_NE(msgs.find("predecessor cycle"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("not older"), std::string::npos) << msgs;
  // Rendering the cyclic chain terminates with a warning instead of spinning.
  Store st = open_store(db, Store::Mode::read_only);
  RenderOptions o;
  o.head = "o2";
  Rendered rd = render_context(st, "o", o);
  EXPECT_EQ(rd.reads, (std::vector<std::string>{"o1", "o2"}));
  ASSERT_EQ(rd.warnings.size(), 1u);
  EXPECT_NE(rd.warnings[0].find("cycle"), std::string::npos);
}

TEST_F(VerifyTest, I2PredecessorInAnotherSession) {
  std::string db = copy("i2x.db");
  Node u3;
  {
    Store st = open_store(db, Store::Mode::read_only);
    u3 = *st.node("u3");
  }
  u3.predecessor = "o1";
  std::string digest = node_digest(u3);
  sql(db, "DROP TRIGGER nodes_no_update; UPDATE nodes SET predecessor='o1', digest='" + digest + "' WHERE id='u3';");
  VerifyReport r = verify(db);
  EXPECT_TRUE(std::find(failing(r).begin(), failing(r).end(), "I2") != failing(r).end());
  EXPECT_NE(all_messages(check(r, "I2")).find("another session 'o'"), std::string::npos);
  EXPECT_TRUE(check(r, "I1").ok);
  EXPECT_TRUE(check(r, "I11").ok);
}

// A summary whose covers skip a spine node (n4): substituted, it loses a node from HEAD's context.
TEST_F(VerifyTest, I5RenderLosesASpineNode) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    Txn txn(st.db());
    st.create_session(SessionInfo{"g"});
    put(st, "g", "g1", std::nullopt, "user", txt("1"));
    put(st, "g", "g2", "g1", "assistant", txt("2"));
    put(st, "g", "g3", "g2", "user", txt("3"));
    put(st, "g", "g4", "g3", "assistant", txt("4"));
    put(st, "g", "g5", "g4", "user", txt("5"));
    put(st, "g", "g6", "g5", "assistant", txt("6"));
    put(st, "g", "GS", "g2", "user", txt("summary"), kind::kSummary, {"g3", "g5"}, Json{{"strategy", "rolling"}});
    st.move_head("g", "g6", "append");
    txn.commit();
  }
  VerifyReport r = verify(path_, {"g"});
  // The non-contiguous coverage is itself an I3 violation; I5 shows what it costs the render.
  EXPECT_EQ(failing(r), (std::vector<std::string>{"I3", "I5"}));
  const Check& c = check(r, "I5");
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_EQ(c.violations[0].nodes, std::vector<std::string>{"g4"});
  EXPECT_NE(c.violations[0].message.find("neither rendered nor inside the rendered summary"), std::string::npos);
}

TEST_F(VerifyTest, I5ReportsRepairsAsWarnings) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    Txn txn(st.db());
    st.create_session(SessionInfo{"t"});
    put(st, "t", "t1", std::nullopt, "user", txt("go"));
    put(st, "t", "t2", "t1", "assistant",
        Json::array({Json{{"type", "tool_use"}, {"id", "X"}, {"name", "Bash"}, {"input", Json::object()}}}));
    st.move_head("t", "t2", "append");
    txn.commit();
  }
  VerifyReport r = verify(path_, {"t"});
  EXPECT_TRUE(r.ok);
  const Check& c = check(r, "I5");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0].nodes, std::vector<std::string>{"t2"});
  EXPECT_NE(c.warnings[0].message.find("synthetic"), std::string::npos);
}

TEST_F(VerifyTest, I6HeadMovedByCompaction) {
  std::string db = copy("i6.db");
  sql(db, "DROP TRIGGER head_moves_no_update; UPDATE head_moves SET cause='compact' WHERE node_id='a4';");
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), std::vector<std::string>{"I6"});
  const Check& c = check(r, "I6");
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_EQ(c.violations[0].nodes, std::vector<std::string>{"a4"});
  EXPECT_NE(c.violations[0].message.find("cause 'compact'"), std::string::npos);
}

TEST_F(VerifyTest, I6HeadBeyondBoundary) {
  std::string db = copy("i6b.db");
  sql(db, "DROP TRIGGER head_moves_no_update; UPDATE head_moves SET boundary_seq=9999 WHERE node_id='o3';");
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), std::vector<std::string>{"I6"});
  EXPECT_NE(all_messages(check(r, "I6")).find("beyond the database's last seq"), std::string::npos);
}

TEST_F(VerifyTest, I11ForeignKeyBroken) {
  std::string db = copy("i11.db");
  sql(db, "INSERT INTO covers(summary_seq, pos, node_id) VALUES (9999, 0, 'u1');");
  VerifyReport r = verify(db);
  EXPECT_EQ(failing(r), std::vector<std::string>{"I11"});
  EXPECT_NE(all_messages(check(r, "I11")).find("table 'covers'"), std::string::npos) << all_messages(check(r, "I11"));
}

// A tool result that arrives after other turns moves up to its call and replaces the synthetic
// result: the prefix changes by repair policy, reported as a warning, not a violation.
TEST_F(VerifyTest, I10LateToolResultIsAWarning) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    Txn txn(st.db());
    st.create_session(SessionInfo{"late"});
    put(st, "late", "l1", std::nullopt, "user", txt("start"));
    put(st, "late", "l2", "l1", "assistant",
        Json::array({Json{{"type", "tool_use"}, {"id", "LT"}, {"name", "Bash"}, {"input", Json::object()}}}));
    put(st, "late", "l3", "l2", "user", txt("while that runs"));
    put(st, "late", "l4", "l3", "assistant", txt("ok"));
    put(st, "late", "l5", "l4", "user", txt("and?"));
    put(st, "late", "l6", "l5", "tool",
        Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "LT"}, {"content", "done"}, {"is_error", false}}}));
    st.move_head("late", "l6", "append");
    txn.commit();
  }
  VerifyReport r = verify(path_, {"late"});
  EXPECT_TRUE(r.ok) << verify_to_json(r).dump();
  const Check& c = check(r, "I10");
  ASSERT_EQ(c.warnings.size(), 2u);  // openai and anthropic
  EXPECT_NE(c.warnings[0].message.find("synthetically"), std::string::npos);
}

TEST_F(VerifyTest, I10PrefixStabilityHoldsAcrossAppends) {
  VerifyReport r = verify(path_, {"s"});
  EXPECT_TRUE(check(r, "I10").ok) << all_messages(check(r, "I10"));
  EXPECT_TRUE(check(r, "I10").violations.empty());
}

// I3's edges read each covered node's top-level tool blocks only (tool_ids, a SAX pass): a call
// covered without its result is reported once; a tool_use-shaped object nested in a call's input
// is not a call.
TEST_F(VerifyTest, I3UnbalancedLastEdgeReadsTopLevelBlocksOnly) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    Txn txn(st.db());
    st.create_session(SessionInfo{"e"});
    put(st, "e", "e1", std::nullopt, "user", txt("go"));
    Json nested = Json{{"nested", Json{{"type", "tool_use"}, {"id", "Z"}}}, {"list", Json::array({"tool_use"})}};
    put(st, "e", "e2", "e1", "assistant",
        Json::array({Json{{"type", "tool_use"}, {"id", "T"}, {"name", "Bash"}, {"input", nested}}}));
    put(st, "e", "e3", "e2", "user", Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "T"}, {"content", "ok"}}}));
    put(st, "e", "e4", "e3", "user", Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "Z"}, {"content", "z"}}}));
    put(st, "e", "e5", "e4", "assistant", txt("done"));
    put(st, "e", "ES", std::nullopt, "user", txt("summary"), kind::kSummary, {"e1", "e2"}, Json{{"strategy", "rolling"}});
    st.move_head("e", "e5", "append");
    txn.commit();
  }
  VerifyReport r = verify(path_, {"e"});
  const Check& c = check(r, "I3");
  ASSERT_EQ(c.violations.size(), 1u) << all_messages(c);
  EXPECT_NE(c.violations[0].message.find("covers tool call 'T' but not its result (unbalanced last edge)"),
            std::string::npos);
}

}  // namespace
}  // namespace ctxfold
