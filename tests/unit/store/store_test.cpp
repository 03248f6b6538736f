#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/store.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-store-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Node msg(const std::string& id, const std::string& session, std::optional<std::string> pred,
                  const std::string& role, const std::string& text) {
    Node n;
    n.id = id;
    n.session = session;
    n.predecessor = std::move(pred);
    n.role = role;
    n.content = Json::array({Json{{"type", "text"}, {"text", text}}});
    return n;
  }

  /// Session s1 with one user message "a" ("u1") as HEAD; returns that node as appended (its seq set).
  static Node start_s1(Store& s) {
    s.create_session(SessionInfo{"s1"});
    Node a = msg("a", "s1", std::nullopt, "user", "u1");
    s.append(a);
    s.move_head("s1", "a", "append");
    return a;
  }

  std::string read_bytes(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(StoreTest, MigratesToCurrentSchemaVersion) {
  Store s = open_store(path_, Store::Mode::read_write);
  EXPECT_EQ(s.db().user_version(), schema_version());
  EXPECT_GE(schema_version(), 1);
}

/// The SQL sqlite_master keeps for the index (empty when there is none).
std::string predecessor_index_sql(Store& s) {
  Stmt q = s.db().prepare("SELECT sql FROM sqlite_master WHERE type='index' AND name='nodes_predecessor'");
  return q.step() ? q.text(0) : std::string();
}

TEST_F(StoreTest, ABulkLoadIntoAnEmptyDatabaseBuildsThePredecessorIndexAtTheEnd) {
  Store s = open_store(path_, Store::Mode::read_write);
  const std::string schema_sql = predecessor_index_sql(s);
  ASSERT_EQ(schema_sql, "CREATE INDEX nodes_predecessor ON nodes(predecessor)");
  {
    Txn t(s.db());
    ASSERT_TRUE(s.defer_predecessor_index());
    EXPECT_FALSE(s.defer_predecessor_index());  // already deferred
    EXPECT_FALSE(s.db().has_schema_object("nodes_predecessor"));
    start_s1(s);
    Node b = msg("b", "s1", "a", "assistant", "a1");
    s.append(b);
    s.restore_predecessor_index();
    t.commit();
  }
  EXPECT_EQ(predecessor_index_sql(s), schema_sql);
  EXPECT_EQ(s.children("a"), std::vector<std::string>{"b"});
  // Nodes exist now: an incremental load keeps the index.
  Txn t(s.db());
  EXPECT_FALSE(s.defer_predecessor_index());
  EXPECT_EQ(predecessor_index_sql(s), schema_sql);
}

TEST_F(StoreTest, AReadThroughADeferredPredecessorIndexBuildsItFirst) {
  Store s = open_store(path_, Store::Mode::read_write);
  Txn t(s.db());
  ASSERT_TRUE(s.defer_predecessor_index());
  start_s1(s);
  Node b = msg("b", "s1", "a", "assistant", "a1");
  s.append(b);
  EXPECT_EQ(s.children("a"), std::vector<std::string>{"b"});
  EXPECT_EQ(predecessor_index_sql(s), "CREATE INDEX nodes_predecessor ON nodes(predecessor)");
  s.restore_predecessor_index();  // nothing left to do
  t.commit();
  EXPECT_EQ(predecessor_index_sql(s), "CREATE INDEX nodes_predecessor ON nodes(predecessor)");
}

TEST_F(StoreTest, ARolledBackBulkLoadLeavesThePredecessorIndex) {
  {
    Store s = open_store(path_, Store::Mode::read_write);
    Txn t(s.db());
    ASSERT_TRUE(s.defer_predecessor_index());
    start_s1(s);
  }  // no commit: rolled back
  Store s = open_store(path_, Store::Mode::read_write);
  EXPECT_EQ(s.max_seq(), 0);
  EXPECT_EQ(predecessor_index_sql(s), "CREATE INDEX nodes_predecessor ON nodes(predecessor)");
}

TEST_F(StoreTest, RefusesUpdateAndDeleteOfNodes) {
  Store s = open_store(path_, Store::Mode::read_write);
  s.create_session(SessionInfo{"s1"});
  Node a = msg("a", "s1", std::nullopt, "user", "hello");
  ASSERT_EQ(s.append(a), AppendResult::added);
  EXPECT_THROW(s.db().exec("UPDATE nodes SET content='[]' WHERE id='a'"), Error);
  EXPECT_THROW(s.db().exec("DELETE FROM nodes WHERE id='a'"), Error);
  s.move_head("s1", "a", "append");
  EXPECT_THROW(s.db().exec("DELETE FROM head_moves"), Error);
  EXPECT_THROW(s.db().exec("UPDATE head_moves SET cause='compact'"), Error);
  auto back = s.node("a");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->content[0]["text"], "hello");
  EXPECT_EQ(back->digest, node_digest(*back));
}

TEST_F(StoreTest, DuplicateAndConflictAreNotWritten) {
  Store s = open_store(path_, Store::Mode::read_write);
  s.create_session(SessionInfo{"s1"});
  Node a = msg("a", "s1", std::nullopt, "user", "hello");
  ASSERT_EQ(s.append(a), AppendResult::added);
  Node same = msg("a", "s1", std::nullopt, "user", "hello");
  EXPECT_EQ(s.append(same), AppendResult::duplicate);
  Node other = msg("a", "s1", std::nullopt, "user", "changed");
  EXPECT_EQ(s.append(other), AppendResult::conflict);
  EXPECT_EQ(s.node_count("s1"), 1);
}

TEST_F(StoreTest, HeadIsTheNewestRecordedMoveAndAsOfReadsThePast) {
  Store s = open_store(path_, Store::Mode::read_write);
  const Node a = start_s1(s);
  Node b = msg("b", "s1", std::string("a"), "assistant", "a1");
  s.append(b);
  s.move_head("s1", "b", "append");
  EXPECT_EQ(s.head("s1"), "b");
  EXPECT_EQ(s.head("s1", a.seq), "a");
  auto moves = s.head_moves("s1");
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[1].previous, "a");
  EXPECT_EQ(moves[1].cause, "append");
}

TEST_F(StoreTest, SummaryCoversAreStoredInOrder) {
  Store s = open_store(path_, Store::Mode::read_write);
  s.create_session(SessionInfo{"s1"});
  Node a = msg("a", "s1", std::nullopt, "user", "u1");
  Node b = msg("b", "s1", std::string("a"), "assistant", "a1");
  s.append(a);
  s.append(b);
  Node sum = msg("sum", "s1", std::nullopt, "user", "summary");
  sum.kind = kind::kSummary;
  sum.covers_ids = {"a", "b"};
  ASSERT_EQ(s.append(sum), AppendResult::added);
  auto active = s.active_summary("s1");
  ASSERT_TRUE(active);
  EXPECT_EQ(active->id, "sum");
  EXPECT_EQ(active->metadata["covers"]["last"], "b");
  EXPECT_EQ(active->metadata["covers"]["count"], 2);
  EXPECT_EQ(s.covers_of(active->seq), (std::vector<std::string>{"a", "b"}));
  auto full = s.node("sum");
  EXPECT_EQ(full->digest, node_digest(*full)) << "digest must be reproducible from the stored row";
}

TEST_F(StoreTest, ReadOnlyOpenNeverChangesTheFile) {
  {
    Store s = open_store(path_, Store::Mode::read_write);
    start_s1(s);
    s.db().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  std::string before = read_bytes(path_);
  {
    Store r = open_store(path_, Store::Mode::read_only);
    EXPECT_EQ(r.head("s1"), "a");
    EXPECT_THROW(r.db().exec("INSERT INTO events(session,type,payload,boundary_seq) VALUES('s1','x','{}',0)"), Error);
  }
  EXPECT_EQ(read_bytes(path_), before);
}

TEST_F(StoreTest, ReadOnlyOpenOfMissingOrForeignFileFails) {
  try {
    open_store((dir_ / "absent.db").string(), Store::Mode::read_only);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::environment);
  }
  EXPECT_FALSE(fs::exists(dir_ / "absent.db"));
  std::ofstream(dir_ / "junk.db") << "this is not sqlite at all, just text padding padding padding padding";
  try {
    open_store((dir_ / "junk.db").string(), Store::Mode::read_only);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::bad_input);
  }
}

TEST_F(StoreTest, ResolveSessionPrefersOnlyThenNewestMain) {
  Store s = open_store(path_, Store::Mode::read_write);
  EXPECT_THROW(s.resolve_session(std::nullopt), Error);
  s.create_session(SessionInfo{"first"});
  EXPECT_EQ(s.resolve_session(std::nullopt), "first");
  s.create_session(SessionInfo{"second"});
  SessionInfo side{"side"};
  side.kind = "sidechain";
  s.create_session(side);
  Node a = msg("a", "first", std::nullopt, "user", "x");
  s.append(a);
  Node b = msg("b", "second", std::nullopt, "user", "y");
  s.append(b);
  Node c = msg("c", "side", std::nullopt, "user", "z");
  s.append(c);
  EXPECT_EQ(s.resolve_session(std::nullopt), "second");
  EXPECT_EQ(s.resolve_session(std::string("first")), "first");
  EXPECT_THROW(s.resolve_session(std::string("nope")), Error);
}


// A store opened read-only reads one snapshot for its whole life (docs/commands.md "Reading never
// writes"): what a writer commits after the open is not seen, so no check reads half of a write.
TEST_F(StoreTest, ReadOnlyStoreReadsOneSnapshot) {
  Store w = open_store(path_, Store::Mode::read_write);
  start_s1(w);
  Store r = open_store(path_, Store::Mode::read_only);
  const std::int64_t seen = r.max_seq();
  {
    Txn t(w.db());
    Node b = msg("b", "s1", std::string("a"), "assistant", "b1");
    w.append(b);
    w.move_head("s1", "b", "append");
    t.commit();
  }
  EXPECT_EQ(r.max_seq(), seen);
  EXPECT_EQ(r.head("s1"), "a");
  EXPECT_FALSE(r.has_node("b"));
  EXPECT_EQ(open_store(path_, Store::Mode::read_only).head("s1"), "b");  // a new open sees it
}

// A read of a WAL database nobody has open leaves no -wal or -shm file behind.
TEST_F(StoreTest, ReadOnlyOpenLeavesNoWalFiles) {
  {
    Store s = open_store(path_, Store::Mode::read_write);
    s.create_session(SessionInfo{"s1"});
  }
  ASSERT_FALSE(fs::exists(path_ + "-wal"));
  {
    Store r = open_store(path_, Store::Mode::read_only);
    EXPECT_EQ(r.sessions().size(), 1u);
    EXPECT_THROW(r.db().exec("INSERT INTO events(session,type,payload,boundary_seq) VALUES('s1','x','{}',0)"), Error);
  }
  EXPECT_FALSE(fs::exists(path_ + "-wal"));
  EXPECT_FALSE(fs::exists(path_ + "-shm"));
}

// A 0-byte file (a first import killed before SQLite wrote a page) is a new database to a writer
// and "no ctxfold data yet" to a reader; two writers opening one new file both find it current.
TEST_F(StoreTest, EmptyFileIsNewToAWriter) {
  std::ofstream(path_).close();
  try {
    open_store(path_, Store::Mode::read_only);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "db.empty");
    EXPECT_EQ(e.exit(), Exit::bad_input);
  }
  Store a = open_store(path_, Store::Mode::read_write);
  Store b = open_store(path_, Store::Mode::read_write);
  EXPECT_EQ(a.db().user_version(), schema_version());
  EXPECT_EQ(b.db().user_version(), schema_version());
}

// The Error a call throws (fails the test when it throws none).
template <class F>
Error error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an Error";
  return Error(Exit::ok, "", "");
}

// A ledger table dropped by hand: every open is exit 3 naming the table, never exit 70.
TEST_F(StoreTest, MissingLedgerTableIsNamed) {
  {
    Store s = open_store(path_, Store::Mode::read_write);
    s.db().exec("DROP TABLE head_moves");
  }
  for (auto mode : {Store::Mode::read_only, Store::Mode::read_write}) {
    Error e = error_of([&] { open_store(path_, mode); });
    EXPECT_EQ(e.exit(), Exit::bad_input);
    EXPECT_EQ(e.code(), "db.damaged");
    EXPECT_NE(std::string(e.what()).find("table head_moves is missing"), std::string::npos) << e.what();
  }
}

// A statement over a table or column the file lacks names it (exit 3), whatever reads it.
TEST_F(StoreTest, MissingTableOrColumnInAStatementIsNamed) {
  Store s = open_store(path_, Store::Mode::read_write);
  Error t = error_of([&] { s.db().prepare("SELECT x FROM no_such_table"); });
  EXPECT_EQ(t.code(), "db.damaged");
  EXPECT_NE(std::string(t.what()).find("table no_such_table is missing"), std::string::npos) << t.what();
  Error c = error_of([&] { s.db().prepare("SELECT no_such_column FROM nodes WHERE seq=1"); });
  EXPECT_EQ(c.exit(), Exit::bad_input);
  EXPECT_NE(std::string(c.what()).find("table nodes has no column no_such_column"), std::string::npos) << c.what();
}

// A JSON column whose bytes were changed: exit 3 naming the table, the column and the row.
TEST_F(StoreTest, MalformedStoredJsonNamesTheRow) {
  {
    Store s = open_store(path_, Store::Mode::read_write);
    s.create_session(SessionInfo{"s1"});
    Node a = msg("a", "s1", std::nullopt, "user", "u1");
    s.append(a);
    s.db().exec("DROP TRIGGER nodes_no_update");
    s.db().exec("UPDATE nodes SET content = '#' || substr(content, 2) WHERE id = 'a'");
  }
  Store r = open_store(path_, Store::Mode::read_only);
  Error e = error_of([&] { r.node("a"); });
  EXPECT_EQ(e.exit(), Exit::bad_input);
  EXPECT_EQ(e.code(), "db.bad_json");
  const std::string m = e.what();
  EXPECT_NE(m.find("column content of node seq 1 (id 'a') in table nodes"), std::string::npos) << m;
  Error each = error_of([&] { r.for_each_node("s1", [](const Node&) { return true; }); });
  EXPECT_EQ(each.code(), "db.bad_json");
}

// A page of the nodes table overwritten with garbage: quick_check at open refuses the write,
// and a read of that page is exit 3 naming the table.
TEST_F(StoreTest, CorruptPageIsRefused) {
  {
    Store s = open_store(path_, Store::Mode::read_write);
    s.create_session(SessionInfo{"s1"});
    Txn t(s.db());
    for (int i = 0; i < 200; ++i) {
      Node n = msg("n" + std::to_string(i), "s1", std::nullopt, "user", std::string(2400, 'a' + i % 26));
      s.append(n);
    }
    t.commit();
  }
  std::int64_t page = 0, page_size = 0;
  {
    Store r = open_store(path_, Store::Mode::read_only);
    auto q = r.db().prepare("SELECT pageno FROM dbstat WHERE name='nodes' AND pagetype='leaf' ORDER BY pageno LIMIT 1 OFFSET 5");
    ASSERT_TRUE(q.step());
    page = q.int64(0);
    auto ps = r.db().prepare("PRAGMA page_size");
    ASSERT_TRUE(ps.step());
    page_size = ps.int64(0);
  }
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((page - 1) * page_size);
    std::string garbage(static_cast<std::size_t>(page_size), '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  Store w = open_store(path_, Store::Mode::read_write);
  Error check = error_of([&] { check_integrity(w); });
  EXPECT_EQ(check.exit(), Exit::bad_input);
  EXPECT_EQ(check.code(), "db.corrupt");
  Store r = open_store(path_, Store::Mode::read_only);
  Error read = error_of([&] { r.for_each_node("s1", [](const Node&) { return true; }); });
  EXPECT_EQ(read.exit(), Exit::bad_input);
  EXPECT_NE(std::string(read.what()).find("table nodes"), std::string::npos) << read.what();
}

}  // namespace
}  // namespace ctxfold
