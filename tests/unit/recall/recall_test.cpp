// grep / expand / describe / list over a small hand-built store, and over the real Claude Code
// auto-compaction session (its imported compact summary covers the pre-boundary history).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "import/import.hpp"
#include "recall/describe.hpp"
#include "recall/expand.hpp"
#include "recall/grep.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class RecallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-recall-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Node msg(const std::string& id, std::optional<std::string> pred, const std::string& role,
                  const std::string& text) {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = std::move(pred);
    n.role = role;
    n.content = Json::array({Json{{"type", "text"}, {"text", text}}});
    return n;
  }
  static Node summary(const std::string& id, std::optional<std::string> pred, std::vector<std::string> covers,
                      const std::string& text, Json meta = Json{{"strategy", "rolling"}}) {
    Node n = msg(id, std::move(pred), "user", text);
    n.kind = kind::kSummary;
    n.covers_ids = std::move(covers);
    n.metadata = std::move(meta);
    return n;
  }

  /// Chain t0..t(count-1) with the given texts; returns the ids.
  std::vector<std::string> chain(Store& st, const std::vector<std::string>& texts) {
    std::vector<std::string> ids;
    std::optional<std::string> pred;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      Node n = msg("t" + std::to_string(i), pred, i % 2 ? "assistant" : "user", texts[i]);
      EXPECT_EQ(st.append(n), AppendResult::added);
      ids.push_back(n.id);
      pred = n.id;
    }
    return ids;
  }

  static std::vector<GrepMatch> run(Store& st, GrepOptions o, GrepTotals* totals = nullptr) {
    std::vector<GrepMatch> out;
    if (!o.session && !o.scope) o.session = "s";
    GrepTotals t = grep(st, o, [&](const GrepMatch& m) { out.push_back(m); });
    if (totals) *totals = t;
    return out;
  }
  static GrepOptions pat(const std::string& p, bool icase = false) {
    GrepOptions o;
    o.pattern = p;
    o.ignore_case = icase;
    return o;
  }

  /// Joins all pages of an expansion the way a reader does: "\n\n" between different rows.
  static std::string expand_all(Store& st, const std::string& id, std::int64_t limit, int* pages = nullptr) {
    std::string out;
    std::string last_id;
    std::int64_t offset = 0;
    int n = 0;
    for (;;) {
      ExpandPage p = expand(st, id, offset, limit);
      ++n;
      for (const ExpandRow& r : p.rows) {
        if (!last_id.empty() && r.id != last_id) out += kExpandSeparator;
        out += r.text;
        last_id = r.id;
      }
      if (!p.next_offset) break;
      EXPECT_EQ(*p.next_offset, offset + limit);
      offset = *p.next_offset;
      if (n > 100000) break;
    }
    if (pages) *pages = n;
    return out;
  }

  fs::path dir_;
  std::string path_;
};

TEST(GraphemesTest, CountsClustersNotBytesOrCodepoints) {
  EXPECT_EQ(grapheme_count("abc"), 3u);
  EXPECT_EQ(grapheme_count("飞书"), 2u);
  EXPECT_EQ(grapheme_count("e\xCC\x81x"), 2u);       // e + combining acute, x
  EXPECT_EQ(grapheme_count("\r\n"), 1u);              // CR LF is one cluster
  EXPECT_EQ(grapheme_count("\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7"), 1u);  // 🇫🇷
  EXPECT_EQ(grapheme_byte_offset("a飞书b", 2), 4u);
  EXPECT_EQ(casefold("Über STRASSE"), "über strasse");
  EXPECT_EQ(casefold("U\xCC\x88" "ber"), "über");     // decomposed Ü composes, then folds
  EXPECT_EQ(casefold("straße"), "strasse");           // full folding
}

TEST_F(RecallTest, CjkAndMixedScriptQueriesAllFound) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  chain(st, {"我们用飞书沟通", "重跑gen-itgc后再看", "plain latin word"});
  auto m = run(st, pat("飞书"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].id, "t0");
  EXPECT_EQ(m[0].offset, 3);  // graphemes, not bytes (bytes would be 9)
  m = run(st, pat("itgc"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].id, "t1");
  EXPECT_EQ(m[0].offset, 6);
  EXPECT_EQ(m[0].snippet, "重跑gen-itgc后再看");
  m = run(st, pat("gen"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].id, "t1");
  EXPECT_EQ(run(st, pat("latin")).size(), 1u);
  EXPECT_EQ(run(st, pat("飞书", true)).size(), 1u);
  EXPECT_EQ(run(st, pat("ITGC", true)).at(0).offset, 6);
}

TEST_F(RecallTest, PunctuationIsLiteralAndCaseFoldingIsUnicode) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  chain(st, {"TODO: fix the gateway/run.py loop", "mail user@host now", "it's the wrong-book",
             "Über alles", "100% done_ a\"b' OR 1=1; -- NEAR(x y) *"});
  for (const char* q : {"TODO: fix", "gateway/run.py", "user@host", "it's", "wrong-book", "100%", "done_",
                        "a\"b' OR 1=1; --", "NEAR(x y) *"}) {
    GrepTotals t;
    auto m = run(st, pat(q), &t);
    EXPECT_EQ(m.size(), 1u) << q;
    EXPECT_EQ(t.raw_matches, 1) << q;
  }
  EXPECT_TRUE(run(st, pat("über")).empty());  // case-sensitive by default
  auto m = run(st, pat("über", true));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].id, "t3");
  EXPECT_EQ(m[0].offset, 0);
  EXPECT_EQ(run(st, pat("ÜBER", true)).size(), 1u);
  EXPECT_EQ(run(st, pat("todo: FIX", true)).size(), 1u);
  // "." is literal unless --regex.
  EXPECT_TRUE(run(st, pat("run.pz")).empty());
  GrepOptions re = pat("run.p[yz]");
  re.regex = true;
  EXPECT_EQ(run(st, re).size(), 1u);
  re = pat("ÜBER\\s+ALLES", true);
  re.regex = true;
  EXPECT_EQ(run(st, re).size(), 1u);
}

TEST_F(RecallTest, BadAndEmptyPatternsAreErrorsNotEmptyResults) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  chain(st, {"x"});
  GrepOptions o = pat("(unclosed");
  o.regex = true;
  try {
    run(st, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::usage);
    EXPECT_EQ(e.code(), "grep.bad_pattern");
  }
  try {
    run(st, pat(""));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "grep.empty_pattern");
  }
  EXPECT_EQ(run(st, pat("(unclosed")).size(), 0u);  // literal: a valid search with no match
}

TEST_F(RecallTest, InvalidUtf8InStoredTextIsSearchable) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  // The store serializes with replacement; a raw row written by another tool may still carry bad
  // bytes, so write one directly.
  chain(st, {"ok"});
  auto q = st.db().prepare(
      "INSERT INTO nodes(id, session, predecessor, kind, role, content, metadata, tokens, digest) "
      "VALUES ('bad','s','t0','message','user',?1,'{}',1,'x')");
  q.bind(1, std::string("[{\"type\":\"text\",\"text\":\"bad \xFF\xFE bytes \xC3\x9C" "ber\"}]"));
  q.run();
  auto m = run(st, pat("über", true));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].id, "bad");
  EXPECT_EQ(m[0].offset, 13);  // "bad " + two U+FFFD + " bytes "
}

TEST_F(RecallTest, PagingKeepsSeparateTotalsAndCoveredBy) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  std::vector<std::string> texts;
  for (int i = 0; i < 10; ++i) texts.push_back("needle " + std::to_string(i));
  auto ids = chain(st, texts);
  Node s1 = summary("S1", std::nullopt, {ids[0], ids[1], ids[2], ids[3]}, "needle summary one");
  ASSERT_EQ(st.append(s1), AppendResult::added);
  Node s2 = summary("S2", std::nullopt, {ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]}, "needle summary two");
  ASSERT_EQ(st.append(s2), AppendResult::added);
  GrepOptions o = pat("needle");
  o.offset = 1;
  o.limit = 2;
  GrepTotals t;
  auto m = run(st, o, &t);
  EXPECT_EQ(t.raw_matches, 10);
  EXPECT_EQ(t.summary_matches, 2);
  ASSERT_EQ(m.size(), 3u);  // raw t1, t2; summary S2
  EXPECT_EQ(m[0].id, "t1");
  EXPECT_EQ(m[0].covered_by.value_or(""), "S2");  // the newest covering summary
  EXPECT_EQ(m[1].id, "t2");
  EXPECT_EQ(m[2].id, "S2");
  EXPECT_FALSE(m[2].raw);
  EXPECT_FALSE(m[2].covered_by);
  o = pat("needle");
  o.in = GrepIn::summaries;
  EXPECT_EQ(run(st, o, &t).size(), 2u);
  EXPECT_EQ(t.raw_matches, 0);
  o = pat("needle");
  o.scope = "S1";
  m = run(st, o, &t);
  EXPECT_EQ(t.raw_matches, 4);
  EXPECT_EQ(t.summary_matches, 0);
  auto c = run(st, pat("needle 8"));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_FALSE(c[0].covered_by);
}

TEST_F(RecallTest, ExpandReturnsExactlyTheCoveredRowsInOrderAcrossPages) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  std::vector<std::string> texts;
  for (int i = 0; i < 230; ++i)
    texts.push_back("row " + std::to_string(i) + " 飞书 e\xCC\x81 " + std::string(static_cast<std::size_t>(i % 37), 'x'));
  auto ids = chain(st, texts);
  std::vector<std::string> covered(ids.begin() + 190, ids.begin() + 211);
  Node s = summary("S", ids[189], covered, "summary of 190-210");
  ASSERT_EQ(st.append(s), AppendResult::added);
  std::string want;
  for (int i = 190; i <= 210; ++i) want += (i > 190 ? "\n\n" : "") + texts[static_cast<std::size_t>(i)];
  for (std::int64_t limit : {1, 7, 13, 100, 20000}) {
    int pages = 0;
    EXPECT_EQ(expand_all(st, "S", limit, &pages), want) << "limit " << limit;
    if (limit == 20000) EXPECT_EQ(pages, 1);
  }
  ExpandPage p = expand(st, "S", 0, 20000);
  EXPECT_EQ(p.first, "t190");
  EXPECT_EQ(p.last, "t210");
  EXPECT_EQ(p.count, 21);
  EXPECT_FALSE(p.next_offset);
  ASSERT_EQ(p.rows.size(), 21u);
  EXPECT_EQ(p.rows[0].seq, 191);
  // A page never cuts a grapheme: "e + combining acute" stays whole.
  for (std::int64_t off = 0; off < 40; ++off)
    for (const ExpandRow& r : expand(st, "S", off, 3).rows) EXPECT_NE(r.text.rfind("e", 0) == 0 && r.text.size() == 1, true);
  Json d = describe_node(st, "S");
  EXPECT_EQ(d["coverage"]["first"], "t190");
  EXPECT_EQ(d["coverage"]["last"], "t210");
  EXPECT_EQ(d["coverage"]["first_seq"], 191);
  EXPECT_EQ(d["coverage"]["last_seq"], 211);
  EXPECT_EQ(d["coverage"]["count"], 21);
  EXPECT_EQ(d["depth"], 1);
  EXPECT_EQ(d["active"], true);
  std::int64_t tokens = 0;
  for (const std::string& id : covered) tokens += st.node(id)->tokens;
  EXPECT_EQ(d["source_estimated_tokens"], tokens);
  EXPECT_THROW(expand(st, "t3", 0, 10), Error);
}

TEST_F(RecallTest, ExpandOfACutAfterT2IsT1T2AndNestedParentsExpandRecursively) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  auto ids = chain(st, {"t1 text", "t2 text", "t3 text", "t4 text"});
  Node a = summary("A", std::nullopt, {ids[0], ids[1]}, "leaf A", Json{{"strategy", "lcm"}});
  ASSERT_EQ(st.append(a), AppendResult::added);
  EXPECT_EQ(expand_all(st, "A", 3), "t1 text\n\nt2 text");
  Node b = summary("B", ids[1], {ids[2]}, "leaf B", Json{{"strategy", "lcm"}});
  ASSERT_EQ(st.append(b), AppendResult::added);
  Node p = summary("P", std::nullopt, {"A", "B"}, "parent", Json{{"strategy", "lcm"}, {"depth", 2}});
  ASSERT_EQ(st.append(p), AppendResult::added);
  EXPECT_EQ(expand_all(st, "P", 5), "t1 text\n\nt2 text\n\nt3 text");
  Json d = describe_node(st, "P");
  EXPECT_EQ(d["depth"], 2);
  EXPECT_EQ(d["children"], Json::array({"A", "B"}));
  EXPECT_EQ(d["coverage"]["count"], 3);
  EXPECT_EQ(d["active"], true);  // lcm: frontier
  Json da = describe_node(st, "A");
  EXPECT_EQ(da["parents"], Json::array({"P"}));
  EXPECT_EQ(da["active"], false);
  EXPECT_EQ(da["superseded"], true);
  Json raw = describe_node(st, ids[0]);
  EXPECT_EQ(raw["depth"], 0);
  EXPECT_EQ(raw["parents"], Json::array({"A"}));
  Json l = list_views(st, "s", 0, 0);
  EXPECT_EQ(l["total"], 3);
  ASSERT_EQ(l["items"].size(), 3u);
  EXPECT_EQ(l["items"][0]["frontier"], false);
  EXPECT_EQ(l["items"][2]["frontier"], true);
  EXPECT_EQ(l["items"][2]["depth"], 2);
  Json l2 = list_views(st, "s", 1, 1);
  EXPECT_EQ(l2["total"], 3);
  ASSERT_EQ(l2["items"].size(), 1u);
  EXPECT_EQ(l2["items"][0]["id"], "B");
  GrepOptions o = pat("text");
  o.scope = "P";
  GrepTotals t;
  run(st, o, &t);
  EXPECT_EQ(t.raw_matches, 3);
}

}  // namespace
}  // namespace ctxfold

namespace ctxfold {
namespace {

// The real Claude Code auto-compaction session: its isCompactSummary line (1585) is imported as
// a summary view node covering the pre-boundary history.
TEST_F(RecallTest, RealAutoCompactionSessionGrepDescribeExpand) {
  const std::string file = std::string(CTXFOLD_TRANSCRIPTS_DIR) +
                           "/claude-code/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl";
  if (!fs::exists(file)) GTEST_SKIP() << "no transcript at " << file;
  const std::string session = "fa812bfe-b295-4cca-9c2f-fdf01028cb46";
  const std::string summary_id = "7bf19bfa-9a71-402e-9a81-2dad042e663f";
  {
    Store st = open_store(path_, Store::Mode::read_write);
    import_paths(st, {file}, ImportOptions{});
  }
  Store st = open_store(path_, Store::Mode::read_only);
  // Only in a pre-boundary tool result (source line 25).
  GrepOptions o = pat("tmux waiting overlay summaries");
  o.session = session;
  GrepTotals t;
  auto m = run(st, o, &t);
  ASSERT_EQ(t.raw_matches, 1);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].covered_by.value_or(""), summary_id);
  EXPECT_EQ(m[0].role, "tool");
  EXPECT_NE(m[0].snippet.find("tmux waiting overlay summaries"), std::string::npos);
  GrepOptions oi = pat("TMUX WAITING overlay SUMMARIES", true);
  oi.session = session;
  auto mi = run(st, oi, &t);
  ASSERT_EQ(mi.size(), 1u);
  EXPECT_EQ(mi[0].offset, m[0].offset);

  Json d = describe_node(st, summary_id);
  EXPECT_EQ(d["kind"], "summary");
  EXPECT_EQ(d["depth"], 1);
  EXPECT_EQ(d["active"], true);
  EXPECT_EQ(d["producer"]["origin"], "import");
  const std::int64_t count = d["coverage"]["count"].get<std::int64_t>();
  EXPECT_GT(count, 100);
  EXPECT_NE(d["summary_text"].get<std::string>().find("continued from a previous conversation"), std::string::npos);

  // Pages concatenated equal the covered nodes' text joined by "\n\n".
  Coverage cov = resolve_coverage(st, summary_id);
  ASSERT_EQ(static_cast<std::int64_t>(cov.rows.size()), count);
  EXPECT_EQ(d["coverage"]["first"], cov.rows.front());
  std::string want;
  for (std::size_t i = 0; i < cov.rows.size(); ++i) {
    if (i) want += "\n\n";
    want += node_text(*st.node(cov.rows[i]));
  }
  int pages = 0;
  std::string got = expand_all(st, summary_id, 4096, &pages);
  EXPECT_GT(pages, 5);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  Json l = list_views(st, session, 0, 0);
  EXPECT_GE(l["total"].get<int>(), 1);
  EXPECT_EQ(l["items"][0]["id"], summary_id);
  EXPECT_EQ(l["items"][0]["frontier"], true);
}

}  // namespace
}  // namespace ctxfold
