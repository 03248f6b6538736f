// Incremental import of an agent home (issue 10): appended lines read from the last offset,
// a rewritten file re-read, files that vanish or grow while being read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "import/home.hpp"
#include "store/store.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

std::string home_user(const std::string& id, const std::string& parent, const std::string& text) {
  return R"({"type":"user","uuid":")" + id + R"(","parentUuid":)" + (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"sessionId":"S1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":")" + text +
         "\"}}\n";
}
std::string assistant(const std::string& id, const std::string& parent, const std::string& msg, const std::string& block) {
  return R"({"type":"assistant","uuid":")" + id + R"(","parentUuid":")" + parent +
         R"(","sessionId":"S1","timestamp":"2026-01-01T00:00:01Z","message":{"id":")" + msg +
         R"(","role":"assistant","model":"claude-x","content":[)" + block + "]}}\n";
}
std::string home_text(const std::string& t) { return R"({"type":"text","text":")" + t + "\"}"; }
std::string call(const std::string& id) {
  return R"({"type":"tool_use","id":")" + id + R"(","name":"Bash","input":{"command":"ls"}})";
}
std::string result(const std::string& id, const std::string& parent, const std::string& call_id) {
  return R"({"type":"user","uuid":")" + id + R"(","parentUuid":")" + parent +
         R"(","sessionId":"S1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
         call_id + R"(","content":"ok"}]}})" + "\n";
}

class HomeImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ctxfold-home-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "home");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name = "sess.jsonl") const { return (dir_ / "home" / name).string(); }
  void write(const std::string& body, const std::string& name = "sess.jsonl", bool append = false) const {
    std::ofstream out(file(name), std::ios::binary | (append ? std::ios::app : std::ios::trunc));
    out << body;
  }
  Store open(const std::string& db = "t.db") const { return open_store((dir_ / db).string(), Store::Mode::read_write); }
  HomeResult run(Store& st, std::function<void(const std::string&)> hook = {}) const {
    HomeOptions o;
    o.from = "all";
    o.dir = (dir_ / "home").string();
    o.after_stat = std::move(hook);
    return import_home(st, o);
  }
  static const HomeFile& only(const HomeResult& r) {
    EXPECT_EQ(r.files.size(), 1u);
    return r.files.front();
  }
  /// "id predecessor" of every node of a session, sorted.
  static std::set<std::string> chain(Store& st, const std::string& session) {
    std::set<std::string> out;
    st.for_each_node(session, [&](const Node& n) {
      out.insert(n.id + " " + n.predecessor.value_or("-"));
      return true;
    });
    return out;
  }

  fs::path dir_;
};

TEST_F(HomeImport, AppendedLinesAreReadFromTheLastOffset) {
  // A streamed assistant message over two lines (one node), two parallel tool calls, one result.
  const std::string first = home_user("u1", "", "list it") + assistant("a1", "u1", "m1", home_text("looking")) +
                            assistant("a1b", "a1", "m1", call("T1") + "," + call("T2")) + result("r1", "a1b", "T1");
  write(first);
  Store st = open();
  HomeResult r1 = run(st);
  EXPECT_EQ(only(r1).outcome, "new");
  EXPECT_EQ(only(r1).bytes_read, static_cast<std::int64_t>(first.size()));
  // The second result names the merged line; the conversation goes on.
  const std::string more = result("r2", "a1b", "T2") + assistant("a2", "r2", "m2", home_text("done")) + home_user("u2", "a2", "thanks");
  write(more, "sess.jsonl", true);
  HomeResult r2 = run(st);
  const HomeFile& f = only(r2);
  EXPECT_EQ(f.outcome, "appended");
  EXPECT_EQ(f.resumed_at, static_cast<std::int64_t>(first.size()));
  EXPECT_EQ(f.bytes_read, static_cast<std::int64_t>(more.size()));  // only the appended bytes
  EXPECT_TRUE(f.resume_refused.empty()) << f.resume_refused;
  EXPECT_TRUE(r2.import.warnings.empty()) << r2.import.warnings.front().code;
  EXPECT_EQ(st.head("sess"), std::optional<std::string>("u2"));
  // The same nodes and links as one whole-file import: the second result after the first
  // (parallel results are chained), the merged line resolved to its node.
  auto n = st.node("r2", false);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->predecessor, std::optional<std::string>("r1"));
  fs::copy_file(file(), file("whole.jsonl"));
  fs::remove(file());
  Store whole = open("w.db");
  run(whole);
  EXPECT_EQ(chain(st, "sess"), chain(whole, "whole"));
}

TEST_F(HomeImport, AStreamedMessageSplitAtTheOffsetIsReadWhole) {
  const std::string first = home_user("u1", "", "go") + assistant("a1", "u1", "m1", home_text("part one"));
  write(first);
  Store st = open();
  run(st);
  write(assistant("a1b", "a1", "m1", home_text("part two")), "sess.jsonl", true);
  HomeResult r = run(st);
  const HomeFile& f = only(r);
  EXPECT_EQ(f.outcome, "appended");
  EXPECT_EQ(f.resumed_at, -1);
  EXPECT_NE(f.resume_refused.find("streamed message"), std::string::npos) << f.resume_refused;
  EXPECT_EQ(f.bytes_read, static_cast<std::int64_t>(fs::file_size(file())));
}

TEST_F(HomeImport, ARewrittenFileIsReadWholeAndDeduplicated) {
  write(home_user("u1", "", "aaaa") + home_user("u2", "u1", "bbbb"));
  Store st = open();
  run(st);
  // Other bytes before the resume point (within the 64 KiB the tail digest covers), then more lines.
  write(home_user("u1", "", "AAAA") + home_user("u2", "u1", "bbbb") + home_user("u3", "u2", "cccc"));
  HomeResult r = run(st);
  EXPECT_EQ(only(r).outcome, "rewritten");
  EXPECT_EQ(only(r).bytes_read, static_cast<std::int64_t>(fs::file_size(file())));
  EXPECT_TRUE(st.node("u3", false));
}

TEST_F(HomeImport, AFileThatVanishesIsReportedAndTheRestImported) {
  write(home_user("u1", "", "kept"), "a.jsonl");
  write(home_user("v1", "", "gone"), "b.jsonl");
  Store st = open();
  HomeResult r = run(st, [&](const std::string& path) {
    if (path.find("b.jsonl") != std::string::npos) fs::remove(path);
  });
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].outcome, "new");
  EXPECT_EQ(r.files[1].outcome, "failed");
  EXPECT_EQ(r.import.warnings.back().code, "source.vanished");
  EXPECT_TRUE(st.node("u1", false));
  EXPECT_FALSE(st.node("v1", false));
}

TEST_F(HomeImport, AFileThatGrowsWhileReadIsResumedWithinWhatWasStatted) {
  const std::string first = home_user("u1", "", "one") + home_user("u2", "u1", "two");
  write(first);
  const std::string grown = home_user("u3", "u2", "three");
  Store st = open();
  HomeResult r1 = run(st, [&](const std::string&) { write(grown, "sess.jsonl", true); });
  // The importer read the grown line too; the resume point stays within the stat'ed size.
  EXPECT_TRUE(st.node("u3", false));
  EXPECT_EQ(only(r1).bytes_read, static_cast<std::int64_t>(first.size()));
  HomeResult r2 = run(st);
  EXPECT_EQ(only(r2).outcome, "appended");
  EXPECT_EQ(only(r2).resumed_at, static_cast<std::int64_t>(first.size()));
  EXPECT_EQ(only(r2).bytes_read, static_cast<std::int64_t>(grown.size()));
  std::int64_t added = 0;
  for (const auto& s : r2.import.sessions) added += s.nodes_added;
  EXPECT_EQ(added, 0);  // read again, deduplicated
  HomeResult r3 = run(st);
  EXPECT_EQ(only(r3).outcome, "unchanged");
  EXPECT_EQ(only(r3).bytes_read, 0);
}

}  // namespace
}  // namespace ctxfold
