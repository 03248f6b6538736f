// expand with the derived cover spans (schema 009) gives exactly the pages of the row-by-row walk:
// over blocks of 1024 covers, nested lcm parents, empty rows, a view met twice, an in-chain
// summary covered as a row, and a child view that became a predecessor after the index was made.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "recall/cover_spans.hpp"
#include "recall/expand.hpp"
#include "recall/text_index.hpp"
#include "store/store.hpp"
#include "util/graphemes.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class CoverSpansTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-spans-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Node msg(const std::string& id, std::optional<std::string> pred, const std::string& text) {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = std::move(pred);
    n.role = "user";
    n.content = Json::array({Json{{"type", "text"}, {"text", text}}});
    return n;
  }
  static Node view(const std::string& id, std::optional<std::string> pred, std::vector<std::string> covers) {
    Node n = msg(id, std::move(pred), "summary " + id);
    n.kind = kind::kSummary;
    n.covers_ids = std::move(covers);
    n.metadata = Json{{"strategy", "lcm"}};
    return n;
  }

  /// Every page of interest of view `id`: offsets around the start, the middle, block edges and
  /// the end, with several limits, flattened to comparable strings.
  static std::vector<std::string> pages(Store& st, const std::string& id, std::int64_t total) {
    std::vector<std::string> out;
    std::vector<std::int64_t> offsets{0, 1, 2, 3, total / 3, total / 2, total * 9 / 10, total - 3, total - 1, total,
                                      total + 5};
    for (std::int64_t k = 1; k <= 3; ++k)  // around the first rows of blocks 1..3 (rows are 20-40 graphemes)
      for (std::int64_t d = -40; d <= 40; d += 7) offsets.push_back(std::max<std::int64_t>(0, k * 1024 * 31 + d));
    for (std::int64_t& off : offsets) off = std::max<std::int64_t>(0, off);
    for (std::int64_t off : offsets)
      for (std::int64_t limit : {1, 2, 3, 29, 500, 200000}) {
        ExpandPage p = expand(st, id, off, limit);
        std::string s = std::to_string(off) + "/" + std::to_string(limit) + " count=" + std::to_string(p.count) +
                        " first=" + p.first + " last=" + p.last +
                        " next=" + (p.next_offset ? std::to_string(*p.next_offset) : "-");
        for (const ExpandRow& r : p.rows) s += " [" + r.id + " " + std::to_string(r.seq) + " " + r.role + " " + r.text + "]";
        out.push_back(std::move(s));
      }
    return out;
  }

  static void add(Store& st, Node n) { ASSERT_EQ(st.append(n), AppendResult::added) << n.id; }

  fs::path dir_;
  std::string path_;
};

TEST_F(CoverSpansTest, PagesWithSpansEqualTheRowByRowWalk) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  std::vector<std::string> ids;
  std::optional<std::string> pred;
  for (int i = 0; i < 3300; ++i) {
    // Mostly 20-40 graphemes; every 97th row empty; CJK and a combining accent in others.
    std::string text = i % 97 == 5 ? "" : "row " + std::to_string(i) + (i % 3 ? " 飞书 e\xCC\x81 " : " x ") +
                                             std::string(static_cast<std::size_t>(i % 23), 'y');
    Node n = msg("t" + std::to_string(i), pred, text);
    ASSERT_EQ(st.append(n), AppendResult::added);
    ids.push_back(n.id);
    pred = n.id;
  }
  auto range = [&](int a, int b) { return std::vector<std::string>(ids.begin() + a, ids.begin() + b); };
  // S: 3000 rows over three blocks. A, B leaves; P their parent plus a raw row; Q meets A twice;
  // E covers nothing; C is in the chain (t3299 continues from it) and R covers it as a row; L is
  // a leaf whose parent M goes stale when a node later names L as its predecessor.
  add(st, view("S", std::nullopt, range(0, 3000)));
  add(st, view("A", std::nullopt, range(0, 10)));
  add(st, view("B", std::nullopt, range(10, 1500)));
  add(st, view("E", std::nullopt, {}));
  add(st, view("P", std::nullopt, {"A", "E", "B", ids[1500]}));
  add(st, view("Q", std::nullopt, {"A", ids[20], "A"}));
  add(st, view("C", ids.back(), range(3000, 3100)));
  add(st, msg("after-c", std::string("C"), "continues from C"));
  add(st, view("R", std::nullopt, {ids[2999], "C", "after-c"}));
  add(st, view("L", std::nullopt, range(3100, 3200)));
  add(st, view("M", std::nullopt, {"L", ids[3200]}));
  const std::vector<std::string> views{"S", "A", "B", "E", "P", "Q", "R", "L", "M"};

  update_text_index(st, false);
  std::map<std::string, std::vector<std::string>> before;
  std::map<std::string, std::int64_t> totals;
  for (const std::string& v : views) {
    ExpandPage whole = expand(st, v, 0, 1 << 30);
    std::int64_t len = 0;
    for (std::size_t i = 0; i < whole.rows.size(); ++i)
      len += (i ? 2 : 0) + static_cast<std::int64_t>(grapheme_count(whole.rows[i].text));
    totals[v] = len;
    before[v] = pages(st, v, totals[v]);
  }

  CoverSpanReport rep = update_cover_spans(st, false);
  EXPECT_EQ(rep.views, static_cast<std::int64_t>(views.size()) + 1);  // and C
  auto seq_of = [&](const std::string& id) { return st.node(id)->seq; };
  ASSERT_TRUE(stored_cover_span(st, seq_of("S")));
  EXPECT_EQ(stored_cover_span(st, seq_of("S"))->rows, 3000);
  EXPECT_EQ(stored_cover_blocks(st, seq_of("S")).size(), 3u);
  EXPECT_EQ(stored_cover_span(st, seq_of("P"))->rows, 10 + 1 + 1490 + 1);  // E has no covers recorded: a row, as resolve_coverage has it
  EXPECT_EQ(stored_cover_span(st, seq_of("R"))->rows, 3);  // C is a row: the chain continues from it
  EXPECT_FALSE(stored_cover_span(st, seq_of("Q")));         // A met twice: walked row by row
  EXPECT_EQ(rep.incomplete, 1);
  for (const std::string& v : views) EXPECT_EQ(pages(st, v, totals[v]), before[v]) << "view " << v;

  // L gains a successor: M's span no longer resolves as expansion does, so expand walks M.
  add(st, msg("after-l", std::string("L"), "continues from L"));
  EXPECT_FALSE(cover_span_current(st, seq_of("M")));
  EXPECT_TRUE(cover_span_current(st, seq_of("P")));
  ExpandPage m = expand(st, "M", 0, 1 << 30);
  EXPECT_EQ(m.count, 2);  // L and t3200, each a row now
  EXPECT_EQ(m.first, "L");
}

TEST_F(CoverSpansTest, IndexDerivesNewViewsOnlyAndRebuildStartsOver) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  add(st, msg("a", std::nullopt, "alpha"));
  add(st, msg("b", std::string("a"), "beta"));
  add(st, view("V1", std::nullopt, {"a"}));
  // Before the text index reaches the view, nothing is derived (lengths come from node_text).
  EXPECT_EQ(update_cover_spans(st, false).views, 0);
  update_text_index(st, false);
  EXPECT_EQ(update_cover_spans(st, false).views, 1);
  EXPECT_EQ(update_cover_spans(st, false).views, 0);  // resumed: nothing new
  add(st, view("V2", std::nullopt, {"a", "b"}));
  update_text_index(st, false);
  CoverSpanReport r = update_cover_spans(st, false);
  EXPECT_EQ(r.views, 1);
  EXPECT_EQ(r.through_seq, st.max_seq());
  ASSERT_TRUE(stored_cover_span(st, st.node("V2")->seq));
  EXPECT_EQ(stored_cover_span(st, st.node("V2")->seq)->graphemes, 9);  // "alpha" + "beta"
  EXPECT_EQ(update_cover_spans(st, true).views, 2);
  ExpandPage p = expand(st, "V2", 5, 4);
  ASSERT_EQ(p.rows.size(), 1u);  // "alpha" ends at 5; "\n\n" is 5-6; then "be"
  EXPECT_EQ(p.rows[0].text, "be");
  EXPECT_EQ(p.rows[0].id, "b");
}

}  // namespace
}  // namespace ctxfold
