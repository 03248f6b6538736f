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
  s.create_session(SessionInfo{"s1"});
  Node a = msg("a", "s1", std::nullopt, "user", "u1");
  s.append(a);
  s.move_head("s1", "a", "append");
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
    s.create_session(SessionInfo{"s1"});
    Node a = msg("a", "s1", std::nullopt, "user", "u1");
    s.append(a);
    s.move_head("s1", "a", "append");
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

}  // namespace
}  // namespace ctxfold
