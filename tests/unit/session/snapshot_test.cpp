// snapshot and --as-of (docs/model.md "seq and the append boundary"): the digest names exactly the
// state a render depends on, and a read at an earlier boundary answers as the database did then,
// however much was appended (and compacted) since.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "import/import.hpp"
#include "render/render.hpp"
#include "session/snapshot.hpp"
#include "store/store.hpp"
#include "strategies/rolling.hpp"
#include "summarize/summarizer.hpp"
#include "util/error.hpp"
#include "session/open.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-snapshot-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_.emplace(open_store((dir_ / "t.db").string(), Store::Mode::read_write));
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  Store& st() { return *store_; }

  void msg(const std::string& session, const std::string& id, const std::string& role, const std::string& text) {
    if (!st().session(session)) st().create_session(SessionInfo{session});
    Node n;
    n.id = id;
    n.session = session;
    n.predecessor = st().head(session);
    n.role = role;
    n.content = Json::array({Json{{"type", "text"}, {"text", text}}});
    ASSERT_EQ(st().append(n), AppendResult::added);
    st().move_head(session, id, "append");
  }
  void turns(const std::string& session, int from, int to) {
    for (int i = from; i <= to; ++i) {
      msg(session, session + "-u" + std::to_string(i), "user", "question " + std::to_string(i) + std::string(400, 'q'));
      msg(session, session + "-a" + std::to_string(i), "assistant", "answer " + std::to_string(i) + std::string(400, 'a'));
    }
  }
  std::string render_bytes(const std::string& session, std::int64_t as_of, std::optional<std::string> head = {}) {
    RenderOptions o;
    o.as_of = as_of;
    o.head = std::move(head);
    return dump_json(render_to_json(render_context(st(), session, o), RenderFormat::openai));
  }
  Exit error_of(const std::function<void()>& f, std::string* code = nullptr) {
    try {
      f();
    } catch (const Error& e) {
      if (code) *code = e.code();
      return e.exit();
    }
    return Exit::ok;
  }

  fs::path dir_;
  std::optional<Store> store_;
};

TEST_F(SnapshotTest, FieldsAndDigestFollowTheState) {
  turns("s", 1, 3);
  Snapshot a = take_snapshot(st(), "s");
  EXPECT_EQ(a.session, "s");
  EXPECT_EQ(a.boundary_seq, st().max_seq());
  EXPECT_EQ(a.head, std::optional<std::string>("s-a3"));
  EXPECT_EQ(a.node_count, 6);
  EXPECT_TRUE(a.active_summaries.empty());
  EXPECT_EQ(a.digest.size(), 64u);
  Json j = snapshot_to_json(a);
  EXPECT_EQ(j["schema"], "ctxfold.snapshot/1");
  for (const char* k : {"session", "boundary_seq", "head", "active_summaries", "node_count", "digest"})
    EXPECT_TRUE(j.contains(k)) << k;
  // The same state twice: the same digest. Another session growing changes nothing of s.
  EXPECT_EQ(take_snapshot(st(), "s").digest, a.digest);
  turns("other", 1, 1);
  Snapshot b = take_snapshot(st(), "s");
  EXPECT_GT(b.boundary_seq, a.boundary_seq);
  EXPECT_EQ(b.digest, a.digest);
  // A HEAD move changes it, and so does an append.
  st().move_head("s", "s-u3", "checkout");
  Snapshot c = take_snapshot(st(), "s");
  EXPECT_NE(c.digest, a.digest);
  st().move_head("s", "s-a3", "checkout");
  EXPECT_EQ(take_snapshot(st(), "s").digest, a.digest);
  turns("s", 4, 4);
  EXPECT_NE(take_snapshot(st(), "s").digest, a.digest);
  // The earlier boundary still gives the earlier state.
  EXPECT_EQ(take_snapshot(st(), "s", a.boundary_seq).digest, a.digest);
}

TEST_F(SnapshotTest, AsOfOutOfRangeIsBadInput) {
  turns("first", 1, 2);
  turns("s", 1, 2);
  auto span = session_span(st(), "s");
  ASSERT_TRUE(span);
  std::string code;
  EXPECT_EQ(error_of([&] { resolve_as_of(st(), "s", st().max_seq() + 1); }, &code), Exit::bad_input);
  EXPECT_EQ(code, "as_of.out_of_range");
  EXPECT_EQ(error_of([&] { resolve_as_of(st(), "s", span->first_seq - 1); }, &code), Exit::bad_input);
  EXPECT_EQ(code, "as_of.out_of_range");
  EXPECT_EQ(error_of([&] { take_snapshot(st(), "s", -5); }), Exit::bad_input);
  EXPECT_EQ(resolve_as_of(st(), "s", span->first_seq), span->first_seq);
  EXPECT_EQ(resolve_as_of(st(), "s", kLatest), st().max_seq());
}

// Database-wide (sessions, show): 0..max_seq, with the same code and message form as a session's.
TEST_F(SnapshotTest, AsOfDatabaseWide) {
  turns("first", 1, 2);
  turns("s", 1, 2);
  EXPECT_EQ(resolve_as_of(st(), std::nullopt, 0), 0);
  EXPECT_EQ(resolve_as_of(st(), std::nullopt, st().max_seq()), st().max_seq());
  EXPECT_EQ(resolve_as_of(st(), std::nullopt, kLatest), st().max_seq());
  std::string code;
  EXPECT_EQ(error_of([&] { resolve_as_of(st(), std::nullopt, st().max_seq() + 1); }, &code), Exit::bad_input);
  EXPECT_EQ(code, "as_of.out_of_range");
  EXPECT_EQ(error_of([&] { resolve_as_of(st(), std::nullopt, -1); }, &code), Exit::bad_input);
  auto message = [&](const std::optional<std::string>& session, std::int64_t as_of) {
    try {
      resolve_as_of(st(), session, as_of);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string hi = std::to_string(st().max_seq());
  EXPECT_EQ(message(std::nullopt, 999), "--as-of 999 is outside the append boundaries of the database: 0.." + hi);
  EXPECT_EQ(message("s", 0), "--as-of 0 is outside the append boundaries of session 's': " +
                                 std::to_string(session_span(st(), "s")->first_seq) + ".." + hi);
  EXPECT_EQ(message("nobody", 1), "--as-of 1 is outside the append boundaries of session 'nobody': none (it has no node)");
}

TEST_F(SnapshotTest, AsOfArgumentParsing) {
  EXPECT_EQ(parse_as_of_arg("42").boundary_seq, 42);
  SnapshotRef r = parse_as_of_arg("-", R"({"schema":"ctxfold.snapshot/1","session":"s","boundary_seq":7,"head":"a1"})");
  EXPECT_EQ(r.boundary_seq, 7);
  EXPECT_EQ(r.session, std::optional<std::string>("s"));
  EXPECT_EQ(r.head, std::optional<std::string>("a1"));
  EXPECT_EQ(error_of([] { parse_as_of_arg("seven"); }), Exit::usage);
  EXPECT_EQ(error_of([] { parse_as_of_arg("-", "not json"); }), Exit::bad_input);
  EXPECT_EQ(error_of([] { parse_as_of_arg("-", R"({"boundary_seq":"7"})"); }), Exit::bad_input);
}

TEST_F(SnapshotTest, RenderAsOfMatchesTheRenderSavedThenAfterAppendsAndACompaction) {
  turns("s", 1, 12);
  Snapshot then = take_snapshot(st(), "s");
  std::string saved = render_bytes("s", kLatest);
  turns("s", 13, 14);
  testing_env::FakeEnvironment env;
  auto summarizer = make_summarizer("extractive", env);
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.force = true;
  o.window = 2000;
  CompactResult c = compact_rolling(st(), "s", *summarizer, o);
  ASSERT_EQ(c.status, "compacted") << c.reason;
  turns("s", 15, 15);
  EXPECT_NE(render_bytes("s", kLatest), saved);  // the present did change
  EXPECT_EQ(render_bytes("s", then.boundary_seq), saved);
  EXPECT_EQ(take_snapshot(st(), "s", then.boundary_seq).digest, then.digest);
  Snapshot now = take_snapshot(st(), "s");
  EXPECT_EQ(now.active_summaries, (std::vector<std::string>{*c.summary_id}));
}

TEST_F(SnapshotTest, RealTranscriptAsOfAfterCompaction) {
  const std::string path = std::string(CTXFOLD_TRANSCRIPTS_DIR) +
                           "/claude-code/images_resume_branch_v2.1.22-2.1.29/47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl";
  if (!fs::exists(path)) GTEST_SKIP() << "no transcript " << path;
  import_paths(st(), {path}, ImportOptions{});
  std::string s = st().resolve_session(std::nullopt);
  Snapshot then = take_snapshot(st(), s);
  std::string saved = render_bytes(s, kLatest);
  msg(s, "later-u", "user", "one more question");
  msg(s, "later-a", "assistant", "one more answer");
  testing_env::FakeEnvironment env;
  auto summarizer = make_summarizer("extractive", env);
  RollingOptions o;
  o.env = &testing_env::shared_environment();
  o.force = true;
  o.window = 4000;
  compact_rolling(st(), s, *summarizer, o);
  EXPECT_EQ(render_bytes(s, then.boundary_seq), saved);
  EXPECT_EQ(take_snapshot(st(), s, then.boundary_seq).digest, then.digest);
}

}  // namespace
}  // namespace ctxfold
