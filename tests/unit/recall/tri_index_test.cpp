// The positional trigram index (grep_tri, schema 010) answers exactly: for every needle, the nodes
// it returns are the nodes whose folded text holds the needle, computed here by brute force.
// Texts are built so common trigrams span many rows (the skip and seek paths), needles overlap
// themselves ("aaaa", "abab"), and non-ASCII characters sit next to ASCII ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "recall/text_index.hpp"
#include "recall/tri_index.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "session/open.hpp"

namespace fs = std::filesystem;

namespace ctxfold {
namespace {

TEST(TriCoverTest, CoversEveryByteAtTheLeastWeight) {
  EXPECT_TRUE(tri_cover({}).empty());
  EXPECT_EQ(tri_cover({5}), (std::vector<std::size_t>{0}));
  // "error": err, rro, ror; err and ror cover all five bytes.
  EXPECT_EQ(tri_cover({10, 1, 10}), (std::vector<std::size_t>{0, 2}));
  // A heavy middle trigram is avoided when lighter ones cover its bytes.
  EXPECT_EQ(tri_cover({1, 1, 1000, 1, 1, 1}), (std::vector<std::size_t>{0, 3, 5}));
  // Every cover starts at 0, ends at the last offset and leaves no gap of more than 3.
  std::mt19937 rng(7);
  for (int t = 0; t < 200; ++t) {
    std::vector<std::int64_t> w(1 + rng() % 30);
    for (auto& x : w) x = 1 + static_cast<std::int64_t>(rng() % 1000);
    const std::vector<std::size_t> c = tri_cover(w);
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c.front(), 0u);
    EXPECT_EQ(c.back(), w.size() - 1);
    for (std::size_t i = 1; i < c.size(); ++i) EXPECT_TRUE(c[i] > c[i - 1] && c[i] - c[i - 1] <= 3);
    // No other valid cover is lighter (exhaustive for short needles).
    if (w.size() <= 14) {
      std::int64_t got = 0;
      for (auto o : c) got += w[o];
      std::int64_t best = std::numeric_limits<std::int64_t>::max();
      for (std::uint32_t mask = 0; mask < (1u << w.size()); ++mask) {
        if (!(mask & 1u) || !(mask & (1u << (w.size() - 1)))) continue;
        std::int64_t sum = 0, prev = -1;
        bool ok = true;
        for (std::size_t o = 0; o < w.size(); ++o) {
          if (!(mask & (1u << o))) continue;
          if (prev >= 0 && static_cast<std::int64_t>(o) - prev > 3) ok = false;
          prev = static_cast<std::int64_t>(o);
          sum += w[o];
        }
        if (ok) best = std::min(best, sum);
      }
      EXPECT_EQ(got, best);
    }
  }
}

class TriIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-tri-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void add(Store& st, const std::string& text, bool summary = false) {
    Node n;
    n.id = "n" + std::to_string(texts_.size());
    n.session = "s";
    n.predecessor = last_;
    n.role = "user";
    n.content = Json::array({Json{{"type", "text"}, {"text", text}}});
    if (summary) {
      n.kind = kind::kSummary;
      n.predecessor.reset();
      n.covers_ids = {*last_};
    } else {
      last_ = n.id;
    }
    ASSERT_EQ(st.append(n), AppendResult::added);
    texts_.push_back(text);
    views_.push_back(summary);
  }

  /// The (seq, view) of every node whose folded text holds needle, by brute force.
  std::vector<std::pair<std::int64_t, bool>> brute(const std::string& needle, std::int64_t through) {
    std::vector<std::pair<std::int64_t, bool>> out;
    for (std::size_t i = 0; i < texts_.size() && static_cast<std::int64_t>(i) + 1 <= through; ++i)
      if (casefold(texts_[i]).find(needle) != std::string::npos) out.emplace_back(static_cast<std::int64_t>(i) + 1, views_[i]);
    return out;
  }
  std::vector<std::pair<std::int64_t, bool>> indexed(Store& st, const std::string& needle, std::int64_t through) {
    std::vector<std::pair<std::int64_t, bool>> out;
    for_each_tri_hit(st, needle, through, [&](std::int64_t seq, bool view) { out.emplace_back(seq, view); });
    return out;
  }

  fs::path dir_;
  std::string path_;
  std::vector<std::string> texts_;
  std::vector<bool> views_;
  std::optional<std::string> last_;
};

TEST_F(TriIndexTest, HitsAreExactlyTheNodesThatHoldTheNeedle) {
  std::mt19937 rng(11);
  const std::vector<std::string> words = {"the", "error", "ERROR", "mirror", "terror", "aaaa", "abab", "tmux",
                                          "waiting", "overlay", "summaries", "Straße", "ﬁle", "Über", "飞书", "x",
                                          "a", "ab", "\t", "\"q\"", "%_", "ror", "err"};
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    for (int i = 0; i < 1500; ++i) {
      std::string t;
      // Mostly "the" (a trigram spanning many rows), a rare word now and then.
      const int n = 5 + static_cast<int>(rng() % 40);
      for (int k = 0; k < n; ++k) {
        t += rng() % 6 ? "the " : words[rng() % words.size()] + (rng() % 2 ? " " : "");
      }
      if (i % 97 == 0) t += "tmux waiting overlay summaries";
      add(st, t, i % 50 == 49);
    }
    IndexReport r = update_text_index(st, false, 8192);  // many batches
    EXPECT_EQ(r.through_seq, st.max_seq());
    EXPECT_GT(r.tri_postings, 0);
    auto q = st.db().prepare("SELECT count(*) FROM grep_tri WHERE tri = ?1");
    q.bind(1, static_cast<std::int64_t>(('t' << 14) | ('h' << 7) | 'e'));
    ASSERT_TRUE(q.step());
    EXPECT_GT(q.int64(0), 20);  // "the" spans many rows: the skip and seek paths run
  }
  Store st = open_store(path_, Store::Mode::read_only);
  const std::int64_t max = st.max_seq();
  std::vector<std::string> needles = {"error", "tmux waiting overlay summaries", "the the the", "aaa", "aaaa",
                                      "aaaaa", "abab", "ababab", "rror", "mirror", "e e", "the ", " the",
                                      "summaries the", "file", "strasse", "über", "\"q\" ", "%_ ", "xyz",
                                      "the\tthe", "errorerror", "rorr"};
  for (int i = 0; i < 300; ++i) {  // substrings of stored texts, folded
    const std::string f = casefold(texts_[rng() % texts_.size()]);
    const std::size_t a = rng() % f.size(), len = 3 + rng() % 20;
    const std::string sub = f.substr(a, len);
    if (tri_answerable(sub)) needles.push_back(sub);
  }
  int nonempty = 0;
  for (const std::string& n : needles) {
    if (!tri_answerable(n)) continue;
    for (std::int64_t through : {max, max / 2, std::int64_t{1}}) {
      auto want = brute(n, through);
      EXPECT_EQ(indexed(st, n, through), want) << "'" << n << "' through " << through;
      nonempty += want.empty() ? 0 : 1;
    }
  }
  EXPECT_GT(nonempty, 100);
  EXPECT_FALSE(tri_answerable("ab"));
  EXPECT_FALSE(tri_answerable("über"));
}

TEST_F(TriIndexTest, ResumedRunsAddOnlyNewNodesAndRebuildClears) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  for (int i = 0; i < 40; ++i) add(st, "alpha beta gamma " + std::to_string(i));
  IndexReport a = update_text_index(st, false);
  EXPECT_EQ(a.tri_nodes, 40);
  for (int i = 0; i < 10; ++i) add(st, "alpha delta " + std::to_string(i));
  IndexReport b = update_text_index(st, false);
  EXPECT_EQ(b.tri_nodes, 10);
  EXPECT_EQ(indexed(st, "alpha", st.max_seq()).size(), 50u);
  EXPECT_EQ(indexed(st, "delta", st.max_seq()), brute("delta", st.max_seq()));
  auto postings = [&] {
    auto q = st.db().prepare("SELECT sum(postings) FROM grep_tri_count");
    return q.step() ? q.int64(0) : -1;
  };
  const std::int64_t before = postings();
  IndexReport c = update_text_index(st, true);
  EXPECT_EQ(c.tri_nodes, 50);
  EXPECT_EQ(postings(), before);  // cleared, then the same postings again
  EXPECT_EQ(indexed(st, "gamma 3", st.max_seq()), brute("gamma 3", st.max_seq()));
  // A database indexed before schema 010 (no trigram rows, state 0) gets them on the next run.
  st.db().exec("DELETE FROM grep_tri");
  st.db().exec("DELETE FROM grep_tri_count");
  st.db().exec("UPDATE grep_tri_state SET through_seq = 0");
  EXPECT_EQ(text_index_state(st).tri_through, 0);
  IndexReport d = update_text_index(st, false);
  EXPECT_EQ(d.tri_nodes, 50);
  EXPECT_EQ(d.indexed, 0);  // node_text and grep_fts were current
  EXPECT_EQ(text_index_state(st).tri_through, st.max_seq());
  EXPECT_EQ(indexed(st, "alpha delta 9", st.max_seq()), brute("alpha delta 9", st.max_seq()));
}

TEST_F(TriIndexTest, ACorruptRowIsAnErrorNotAnEmptyAnswer) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  add(st, "corrupt me please");
  update_text_index(st, false);
  st.db().exec("UPDATE grep_tri SET post = x'ff'");
  try {
    indexed(st, "corrupt", st.max_seq());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "tri.corrupt");
  }
}

}  // namespace
}  // namespace ctxfold
