// The grep trigram index (grep_fts) and the derived node_text lengths must give exactly what a
// full scan gives: same matches, offsets, snippets, covering summaries, counts and pages, for
// CJK, punctuation, FTS/SQL syntax characters, case folding by Unicode rules, regexes, scopes,
// a stale index (tail scanned) and ill-formed UTF-8 in stored rows.
#include <gtest/gtest.h>
#include <unistd.h>
#include <utf8proc.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "recall/expand.hpp"
#include "recall/grep.hpp"
#include "recall/text_index.hpp"
#include "recall/text_packs.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

std::string utf8(std::uint32_t cp) {
  utf8proc_uint8_t buf[4];
  auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

std::string reference_fold(const std::string& s) {
  utf8proc_uint8_t* dst = nullptr;
  auto len = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
                          &dst, static_cast<utf8proc_option_t>(UTF8PROC_CASEFOLD | UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  EXPECT_GE(len, 0);
  std::string out(reinterpret_cast<const char*>(dst), static_cast<std::size_t>(len));
  std::free(dst);
  return out;
}

// Pieces random texts and patterns are made of: ASCII words and punctuation (FTS5/SQL syntax
// included), CJK, kana with voicing marks, Hangul syllables and jamo, combining marks, characters
// whose full case folding changes length or leaves ASCII (ß, İ, K, ſ, ﬁ), Greek sigma, emoji.
const std::vector<std::string>& pieces() {
  static const std::vector<std::string> p = {
      "a", "b", "e", "E", "s", "S", "k", "K", "x", "error", "Error", "ERROR", "gen", "itgc", "TODO: fix", " ", " ",
      "\n", "\"", "'", "*", "-", "%", "_", "NEAR", "AND", "OR", "NOT", "(", ")", ":", "^", "/", ".", "@", "\\",
      "飞书", "重跑", "后", "沟通", "か", "\u3099", "が", "ガ", "한", "국", "\u1100", "\u1161", "\u11A8", "\u0301",
      "\u0308", "\u0338", "é", "Ü", "ü", "ß", "ẞ", "SS", "İ", "\u212A", "ſ", "ﬁ", "Σ", "σ", "ς", "🇫🇷", "👍🏽", "=",
      "\u0F73", "\u0B47", "\u0B3E"};
  return p;
}

std::string random_text(std::mt19937& rng, int min_pieces, int max_pieces) {
  std::uniform_int_distribution<int> len(min_pieces, max_pieces);
  std::uniform_int_distribution<std::size_t> pick(0, pieces().size() - 1);
  std::string s;
  for (int i = len(rng); i > 0; --i) s += pieces()[pick(rng)];
  return s;
}

// ------------------------------------------------------------------ folding

TEST(FoldAnchorTest, AnchorsNeverJoinWhatPrecedesThemUnderNormalization) {
  // Every code point's canonical decomposition (after case folding too): no anchor, and no
  // leading Hangul jamo of an anchor's decomposition, appears after the first position.
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    for (int opt : {int{UTF8PROC_DECOMPOSE}}) {  // composition pairs are canonical
      utf8proc_int32_t out[32];
      int last = 0;
      auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), out, 32, static_cast<utf8proc_option_t>(opt),
                                       &last);
      ASSERT_GE(n, 1) << cp;
      for (utf8proc_ssize_t k = 1; k < n; ++k) {
        auto d = static_cast<std::uint32_t>(out[k]);
        EXPECT_FALSE(is_fold_anchor(d)) << std::hex << cp << " has anchor " << d << " at " << k;
        EXPECT_FALSE(d >= 0x1100 && d <= 0x1112) << std::hex << cp;
      }
    }
  }
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (!is_fold_anchor(cp)) continue;
    EXPECT_EQ(utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class, 0) << cp;
  }
}

TEST(FoldAnchorTest, CasefoldInPiecesEqualsOneUtf8procMapAndSplitsAtAnchors) {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string a = random_text(rng, 0, 8), b = random_text(rng, 0, 8);
    std::string s = a + b;
    ASSERT_EQ(casefold(s), reference_fold(s)) << s;
    if (!b.empty()) {
      std::uint32_t cp = 0;
      utf8proc_int32_t c = 0;
      utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(b.data()), static_cast<utf8proc_ssize_t>(b.size()), &c);
      cp = static_cast<std::uint32_t>(c);
      if (is_fold_anchor(cp)) ASSERT_EQ(casefold(s), casefold(a) + casefold(b)) << a << "|" << b;
    }
  }
  EXPECT_EQ(casefold("Cafe\u0301 STRASSE"), "caf\u00e9 strasse");
  EXPECT_EQ(casefold("\u1100\u1161\u11A8x"), "\uAC01x");  // jamo compose across the pieces
}

TEST(RawFilterTest, EveryCharacterThatFoldsIntoAsciiDefeatsTheShortcut) {
  auto f = Matcher("zzz", false, true).raw_filter();
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->may_match("[{\"type\":\"text\",\"text\":\"abc\"}]"));
  EXPECT_TRUE(f->may_match("[{\"type\":\"text\",\"text\":\"aZZzc\"}]"));
  EXPECT_TRUE(f->may_match("[{\"type\":\"text\",\"text\":\"\\u007a\"}]"));    // an escape
  EXPECT_TRUE(f->may_match("[{\"type\":\"tool_use\",\"name\":\"x\"}]"));         // re-serialized input
  EXPECT_FALSE(f->may_match("[{\"type\":\"text\",\"text\":\"a\\\\u007a \\n zz\"}]"));  // \\ then u: no escape
  EXPECT_TRUE(f->may_match("[{\"type\":\"text\",\"text\":\"a \\/ b\"}]"));
  int folding = 0;
  for (std::uint32_t cp = 0x80; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string c = utf8(cp);
    const std::string folded = reference_fold(c);
    if (std::none_of(folded.begin(), folded.end(), [](char b) { return static_cast<unsigned char>(b) < 0x80; }))
      continue;
    ++folding;
    EXPECT_TRUE(f->may_match("[{\"type\":\"text\",\"text\":\"" + c + "\"}]")) << std::hex << cp;
  }
  EXPECT_GT(folding, 10);
  auto uber = Matcher("ÜBER", false, true).raw_filter();  // non-ASCII, non-CJK under -i: the ASCII run
  ASSERT_TRUE(uber);
  EXPECT_EQ(uber->literal, "ber");
  EXPECT_FALSE(uber->whole);
  EXPECT_FALSE(uber->may_match("[{\"type\":\"text\",\"text\":\"no\"}]"));
  EXPECT_TRUE(uber->may_match("[{\"type\":\"text\",\"text\":\"Uber\"}]"));  // a candidate, verified later
  EXPECT_FALSE(Matcher("ü", false, true).raw_filter());  // no ASCII or CJK run at all
  EXPECT_FALSE(Matcher("がぎぐ", false, true).raw_filter());  // kana: composition makes them
  auto mixed = Matcher("飞书über", false, true).text_filter();
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->literal, "飞书");
  EXPECT_TRUE(mixed->needs_cjk_check);
  EXPECT_TRUE(Matcher("飞书", false, true).text_filter()->whole);
  EXPECT_TRUE(Matcher("über", false, false).raw_filter());
  EXPECT_FALSE(Matcher("a\"b", false, false).raw_filter());  // escaped in JSON
  auto cjk = Matcher("飞书", false, true).raw_filter();
  ASSERT_TRUE(cjk);
  EXPECT_TRUE(cjk->may_match("[{\"type\":\"text\",\"text\":\"\uF900\"}]"));  // U+F900 (compat)
}

TEST(RegexLiteralsTest, RequiredRunsOnly) {
  using V = std::vector<std::string>;
  EXPECT_EQ(regex_required_literals("gateway/run\\.py"), V({"gateway/run.py"}));
  EXPECT_EQ(regex_required_literals("abc|def"), V());
  EXPECT_EQ(regex_required_literals("colou?r"), V({"colo", "r"}));
  EXPECT_EQ(regex_required_literals("ab+cd"), V({"ab", "cd"}));
  EXPECT_EQ(regex_required_literals("x(abc|def)*yz"), V({"x", "yz"}));
  EXPECT_EQ(regex_required_literals("[a-z]+ing\\b"), V({"ing"}));
  EXPECT_EQ(regex_required_literals("a{0,3}bcd"), V({"bcd"}));
  EXPECT_EQ(regex_required_literals("\\d+ files"), V({" files"}));
  EXPECT_EQ(regex_required_literals("^TODO: .*fix$"), V({"TODO: ", "fix"}));
  EXPECT_EQ(regex_required_literals("飞书?沟通"), V({"飞", "沟通"}));
  EXPECT_EQ(regex_required_literals("[]abc]x"), V({"x"}));  // RE2: a leading ] is a member
}

TEST(IndexQueryTest, WhatTheIndexIsAskedFor) {
  auto q = [](const char* p, bool re, bool i) { return Matcher(p, re, i).index_query(); };
  EXPECT_FALSE(q("ab", false, true));          // shorter than a trigram, ASCII: no gram either
  auto g = q("飞书", false, true);              // two characters: the short-gram index
  ASSERT_TRUE(g);
  EXPECT_EQ(g->gram, "飞书");
  EXPECT_TRUE(g->match.empty());
  EXPECT_TRUE(g->exact);
  auto gc = q("飞书", false, false);  // case-sensitive: asked, verified (compatibility ideographs fold into these)
  ASSERT_TRUE(gc);
  EXPECT_EQ(gc->gram, "飞书");
  EXPECT_FALSE(gc->exact);
  EXPECT_EQ(q("É", false, true)->gram, "é");
  EXPECT_EQ(q("A书", false, true)->gram, "a书");
  EXPECT_FALSE(q("é", false, false));   // case-sensitive non-CJK: a following mark may compose with it
  auto three = q("Err", false, false);  // three ASCII characters: the fold, or its last one composed
  ASSERT_TRUE(three);
  EXPECT_FALSE(three->exact);
  EXPECT_NE(three->match.find("\"err\""), std::string::npos);
  EXPECT_NE(three->match.find(" OR \"er\u0155\""), std::string::npos);  // r + U+0301 folds to ŕ
  EXPECT_NE(q("ab<", false, false)->match.find("\"ab\u226E\""), std::string::npos);  // < + U+0338: ≮
  EXPECT_FALSE(q("ab", false, false));
  EXPECT_FALSE(q("が", false, false));
  EXPECT_FALSE(q("ß", false, true));    // folds to "ss": ASCII, not a gram
  EXPECT_FALSE(q("飞书", true, true));  // regexes never use grams
  EXPECT_TRUE(q("飞书沟", false, true)->gram.empty());
  ASSERT_TRUE(q("飞书沟", false, true));
  EXPECT_TRUE(q("飞书沟", false, true)->exact);
  EXPECT_EQ(q("Über", false, true)->match, "\"über\"");
  EXPECT_EQ(q("a\"b' OR", false, true)->match, "\"a\"\"b' or\"");  // quotes doubled inside the phrase
  auto cs = q("Error", false, false);
  ASSERT_TRUE(cs);
  EXPECT_FALSE(cs->exact);
  EXPECT_EQ(cs->match, "\"erro\"");  // up to the last anchor, folded
  EXPECT_FALSE(q("xé\u0301", false, false));  // one anchor only: nothing safe to require
  EXPECT_FALSE(q("a|bcd", true, false));
  EXPECT_EQ(q("TODO: \\w+ (now)?", true, true)->match, "\"todo: \"");
}

TEST(ShortGramsTest, EveryShortSubstringIsListedAndNothingElse) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const std::string folded = reference_fold(random_text(rng, 1, 12));
    std::vector<std::string> listed;
    short_grams(folded, [&](std::string_view g) { listed.emplace_back(g); });
    for (const std::string& g : listed) {
      EXPECT_TRUE(is_short_gram(g)) << g;
      EXPECT_NE(folded.find(g), std::string::npos) << g;
    }
    std::vector<std::size_t> starts;  // code point starts
    for (std::size_t i = 0; i < folded.size(); ++i)
      if ((static_cast<unsigned char>(folded[i]) & 0xC0) != 0x80) starts.push_back(i);
    starts.push_back(folded.size());
    for (std::size_t k = 0; k + 1 < starts.size(); ++k)
      for (std::size_t w : {1, 2}) {
        if (k + w >= starts.size()) continue;
        const std::string sub = folded.substr(starts[k], starts[k + w] - starts[k]);
        EXPECT_EQ(is_short_gram(sub), std::find(listed.begin(), listed.end(), sub) != listed.end())
            << "'" << sub << "' in '" << folded << "'";
      }
  }
  EXPECT_FALSE(is_short_gram("ab"));
  EXPECT_FALSE(is_short_gram("a"));
  EXPECT_FALSE(is_short_gram("飞书沟"));
  EXPECT_FALSE(is_short_gram(""));
  EXPECT_TRUE(is_short_gram("a飞"));
  EXPECT_TRUE(is_short_gram("飞"));
}

// ------------------------------------------------------------------ index vs scan

/// Whether the index can narrow o at all (a valid pattern with an index_query).
bool indexable(const GrepOptions& o) {
  try {
    return Matcher(o.pattern, o.regex, o.ignore_case).index_query().has_value();
  } catch (const Error&) {
    return false;
  }
}

class GrepIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-grepidx-" + std::to_string(::getpid()) + "-" +
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

  struct Result {
    std::vector<std::string> lines;
    GrepTotals totals;
    std::string error;
  };
  static Result run(Store& st, GrepOptions o) {
    Result r;
    try {
      r.totals = grep(st, o, [&](const GrepMatch& m) {
        r.lines.push_back(m.session + "|" + m.id + "|" + std::to_string(m.seq) + "|" + m.kind + "|" + m.role + "|" +
                          (m.raw ? "raw" : "view") + "|" + m.covered_by.value_or("-") + "|" +
                          std::to_string(m.offset) + "|" + m.snippet);
      });
    } catch (const Error& e) {
      r.error = e.code();
    }
    return r;
  }

  /// Runs o with the index, with a scan (raw-content prefilter) and exhaustively (every node
  /// parsed and matched); all must agree on everything but how.
  static void expect_same(Store& st, GrepOptions o, bool expect_index) {
    GrepOptions scan = o;
    scan.exhaustive = true;
    GrepOptions pre = o;
    pre.no_index = true;
    pre.no_packs = true;
    GrepOptions packed = o;
    packed.no_index = true;
    Result a = run(st, o), b = run(st, scan), c = run(st, pre), d = run(st, packed);
    std::string what = "pattern '" + o.pattern + "' i=" + std::to_string(o.ignore_case) +
                       " re=" + std::to_string(o.regex) + " scope=" + o.scope.value_or("-") +
                       " session=" + o.session.value_or("*");
    ASSERT_EQ(a.error, b.error) << what;
    EXPECT_EQ(a.lines, b.lines) << what;
    EXPECT_EQ(a.totals.raw_matches, b.totals.raw_matches) << what;
    EXPECT_EQ(a.totals.summary_matches, b.totals.summary_matches) << what;
    EXPECT_EQ(b.totals.index, "scan");
    EXPECT_EQ(c.error, b.error) << what;
    EXPECT_EQ(c.lines, b.lines) << what << " (prefiltered scan)";
    EXPECT_EQ(c.totals.raw_matches, b.totals.raw_matches) << what << " (prefiltered scan)";
    EXPECT_EQ(c.totals.summary_matches, b.totals.summary_matches) << what << " (prefiltered scan)";
    EXPECT_EQ(d.error, b.error) << what;
    EXPECT_EQ(d.lines, b.lines) << what << " (text packs)";
    EXPECT_EQ(d.totals.raw_matches, b.totals.raw_matches) << what << " (text packs)";
    EXPECT_EQ(d.totals.summary_matches, b.totals.summary_matches) << what << " (text packs)";
    if (expect_index && a.error.empty()) EXPECT_NE(a.totals.index, "scan") << what;
  }

  /// Two sessions of random and hand-picked texts, summaries over some of them, one row with
  /// ill-formed UTF-8 written behind the store's back.
  void fill(Store& st, int count, unsigned seed, int first = 0) {
    std::mt19937 rng(seed);
    static const std::vector<std::string> fixed = {
        "我们用飞书沟通", "重跑gen-itgc后再看", "plain latin word", "TODO: fix the gateway/run.py loop",
        "mail user@host now", "it's the wrong-book", "Über alles", "100% done_ a\"b' OR 1=1; -- NEAR(x y) *",
        "SELECT * FROM t WHERE a LIKE '%_x' AND \"q\" - NOT z", "STRASSE und Straße", "Cafe\u0301 and café",
        "ΣΊΣΥΦΟΣ σίσυφος", "\u212Aelvin kelvin", "ﬁle FILE", "İstanbul", "한국어 텍스트 \u1100\u1161\u11A8",
        "がぎぐ か\u3099き\u3099", "tab\there\r\nCRLF", "line1\nline2 error", "emoji 👍🏽 and 🇫🇷 flag"};
    std::optional<std::string> pred[2];
    for (int i = first; i < first + count; ++i) {
      const std::string session = i % 5 == 4 ? "s2" : "s";
      std::string text = i % 3 == 0 ? fixed[static_cast<std::size_t>(i / 3) % fixed.size()] : random_text(rng, 1, 30);
      if (i % 17 == 0) text += std::string(3000, 'x') + " error tail";
      Node n = msg("n" + std::to_string(i), session, pred[session == "s2"], i % 2 ? "assistant" : "user", text);
      if (i % 11 == 5) {  // a tool call and its result text
        n.content = Json::array({Json{{"type", "tool_use"}, {"id", "tu" + std::to_string(i)}, {"name", "Bash"},
                                      {"input", Json{{"command", text}}}}});
      }
      ASSERT_EQ(st.append(n), AppendResult::added);
      pred[session == "s2"] = n.id;
      ids_.push_back(n.id);
      texts_.push_back(text);
      if (i % 40 == 39) {  // a summary over the last 20 nodes of session s
        Node s = msg("S" + std::to_string(i), "s", std::nullopt, "user", "summary " + random_text(rng, 1, 10) + " error");
        s.kind = kind::kSummary;
        s.metadata = Json{{"strategy", "rolling"}};
        for (std::size_t k = ids_.size() - 20; k < ids_.size(); ++k)
          if (st.node(ids_[k])->session == "s") s.covers_ids.push_back(ids_[k]);
        ASSERT_EQ(st.append(s), AppendResult::added);
        summaries_.push_back(s.id);
      }
    }
  }

  void add_bad_utf8(Store& st, const std::string& id) {
    auto q = st.db().prepare(
        "INSERT INTO nodes(id, session, predecessor, kind, role, content, metadata, tokens, digest) "
        "VALUES (?1,'s',NULL,'message','user',?2,'{}',1,'x')");
    q.bind(1, id).bind(2, std::string("[{\"type\":\"text\",\"text\":\"bad \xFF\xFE bytes \xC3\x9C" "ber error \xE9\xA3\"}]"));
    q.run();
  }

  std::vector<GrepOptions> patterns(unsigned seed) {
    std::vector<std::string> ps = {
        "飞书", "飞书沟", "我们用飞书", "itgc", "gen", "gen-itgc", "重跑gen", "latin", "TODO: fix", "gateway/run.py",
        "user@host", "it's", "wrong-book", "über", "Über", "ÜBER", "100%", "done_", "a\"b' OR 1=1; --", "NEAR(x y) *",
        "\"", "\"q\"", "*", "-", "'", "%", "_", "NEAR", "AND", "OR 1", "LIKE '%_x'", "strasse", "STRASSE", "straße",
        "café", "cafe", "σίσυφος", "ΣΊΣΥΦΟΣ", "kelvin", "KELVIN", "file", "FILE", "istanbul", "i̇stanbul", "한국어",
        "\u1100\u1161\u11A8", "각", "がぎぐ", "かき", "ぎ", "error", "ERROR", "Error", "x error tail", "xxxxxxxx",
        "tab\there", "\r\nCRLF", "line1\nline2", "👍🏽", "🇫🇷 flag", "bad ", "\xEF\xBF\xBD", "bytes Über", "Über error",
        "summary", "Bash {\"command\"", "{\"command\":", "no such text anywhere"};
    std::mt19937 rng(seed);
    for (int i = 0; i < 40; ++i) {  // substrings of stored texts, and random piece strings
      const std::string& t = texts_[rng() % texts_.size()];
      std::size_t a = rng() % (t.size() + 1), len = 1 + rng() % 12;
      std::string sub = t.substr(a, len);
      if (!sub.empty()) ps.push_back(sub);  // may cut a UTF-8 sequence: sanitized like any pattern
      ps.push_back(random_text(rng, 1, 3));
    }
    std::vector<GrepOptions> out;
    for (const std::string& p : ps)
      for (bool icase : {false, true}) {
        GrepOptions o;
        o.pattern = p;
        o.ignore_case = icase;
        out.push_back(o);
      }
    for (const char* re : {"gateway/run\\.p[yz]", "ÜBER\\s+ALLES", "err(or)? tail", "colou?r|error", "[a-z]+ing",
                           "\\d+% done", "^summary .*error$", "飞书?沟通", "x{3000} error", "(unclosed", "a{2,",
                           "Kelvin|k", "line2 err", "\"q\" - NOT"}) {
      for (bool icase : {false, true}) {
        GrepOptions o;
        o.pattern = re;
        o.regex = true;
        o.ignore_case = icase;
        out.push_back(o);
      }
    }
    GrepOptions empty;
    out.push_back(empty);
    return out;
  }

  fs::path dir_;
  std::string path_;
  std::vector<std::string> ids_, texts_, summaries_;
};

TEST_F(GrepIndexTest, IndexAnswersEqualScanAnswersOverManyPatterns) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"s2"});
    fill(st, 240, 1);
    add_bad_utf8(st, "bad");
    IndexReport r = update_text_index(st, false, 4096);  // small batches: many commits
    ASSERT_TRUE(r.fts) << r.reason;
    EXPECT_EQ(r.through_seq, st.max_seq());
  }
  Store st = open_store(path_, Store::Mode::read_only);
  ASSERT_TRUE(text_index_state(st).fts);
  int compared = 0;
  for (GrepOptions o : patterns(3)) {
    const bool use_index = indexable(o);
    o.session = "s";
    expect_same(st, o, use_index);
    if (compared % 2 == 0) {
      GrepOptions all = o;
      all.session.reset();
      expect_same(st, all, use_index);
    }
    if (compared % 7 == 0) {
      GrepOptions paged = o;
      paged.offset = 2;
      paged.limit = 3;
      expect_same(st, paged, use_index);
      paged.limit = 0;
      expect_same(st, paged, use_index);
      for (GrepIn in : {GrepIn::raw, GrepIn::summaries}) {
        GrepOptions w = o;
        w.in = in;
        expect_same(st, w, use_index);
        w.session.reset();  // all sessions: the index's hits are split into raw and view nodes without node_text
        expect_same(st, w, use_index);
        w.offset = 1;
        w.limit = 2;
        expect_same(st, w, use_index);
      }
      GrepOptions sc = o;
      sc.session.reset();
      sc.scope = summaries_[static_cast<std::size_t>(compared) % summaries_.size()];
      expect_same(st, sc, use_index);
    }
    ++compared;
    if (HasFailure()) break;
  }
  EXPECT_GT(compared, 200);
  // The cases of the issue, by name.
  GrepOptions o;
  o.pattern = "";
  EXPECT_EQ(run(st, o).error, "grep.empty_pattern");
  o.pattern = "(unclosed";
  o.regex = true;
  EXPECT_EQ(run(st, o).error, "grep.bad_pattern");
  o.pattern = "Über error";
  o.regex = false;
  o.ignore_case = true;
  Result bad = run(st, o);
  ASSERT_EQ(bad.lines.size(), 1u);
  EXPECT_NE(bad.lines[0].find("|bad|"), std::string::npos);
  EXPECT_EQ(bad.totals.index, "fts5");
}

TEST_F(GrepIndexTest, TextPacksAnswerEqualScanAnswersWithATailAndSmallPacks) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"s2"});
    fill(st, 160, 11);
    add_bad_utf8(st, "bad");
    PackReport r = update_text_packs(st, 0, false, 600);  // small packs: hits straddle pack and node ends
    EXPECT_EQ(r.through_seq, st.max_seq());
    EXPECT_GT(r.packs, 10);
    update_text_index(st, false);
    fill(st, 70, 12, 160);  // the FTS index and the packs stop here
    PackReport tail = update_text_packs(st, 1000);  // fewer than 1000 new nodes: left unpacked
    EXPECT_EQ(tail.packed, 0);
    EXPECT_EQ(tail.through_seq, r.through_seq);
  }
  Store st = open_store(path_, Store::Mode::read_only);
  const std::int64_t packed = text_pack_through(st);
  ASSERT_GT(packed, 0);
  ASSERT_LT(packed, st.max_seq());
  int compared = 0;
  for (GrepOptions o : patterns(13)) {
    expect_same(st, o, indexable(o));
    GrepOptions one = o;
    one.session = compared % 2 ? "s" : "s2";
    expect_same(st, one, indexable(o));
    if (compared % 5 == 0) {
      GrepOptions paged = o;
      paged.offset = 1;
      paged.limit = 2;
      expect_same(st, paged, indexable(o));
      GrepOptions w = o;
      w.in = compared % 10 ? GrepIn::raw : GrepIn::summaries;
      expect_same(st, w, indexable(o));
    }
    ++compared;
    if (HasFailure()) break;
  }
  GrepOptions o;
  o.pattern = "error";
  o.no_index = true;
  EXPECT_EQ(run(st, o).totals.packed_through, packed);
}

TEST_F(GrepIndexTest, PackScanHitsAtNodeEdgesManyHitsPerNodeAndFoldingNeighbours) {
  // Texts where a hit in a pack's text can mislead: a literal across two nodes' texts, many hits
  // in one node, a hit followed by a combining mark (folding joins it with the hit's last letter:
  // "r\u0301" is "ŕ"), a non-anchor after a hit that does not change it (é), characters folding
  // into the literal where its bytes are absent (ſ ß K, a CJK compatibility ideograph).
  const std::vector<std::string> texts = {
      "log: err", "or at start", [] {
        std::string s;
        for (int i = 0; i < 500; ++i) s += "error Error ";
        return s;
      }(),
      "ERROR\u0301", "error\u0301 and then Error.", "飞书\u0301", "飞书x", "\u017Ftatus ok", "Straße", "\uF900 compat",
      "ß飞书", "café error", "erroré", "e\u0301rror", "x", "KELVIN \u212Aelvin", "飞书\u3099", "ERROR\u0301ERROR", "ÜBER alles", "Uber", "u\u0308ber"};
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    std::optional<std::string> pred;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      Node n = msg("n" + std::to_string(i), "s", pred, "user", texts[i]);
      ASSERT_EQ(st.append(n), AppendResult::added);
      pred = n.id;
    }
    Node s = msg("S", "s", std::nullopt, "user", "summary: Error\u0301 then error");
    s.kind = kind::kSummary;
    s.metadata = Json{{"strategy", "rolling"}};
    s.covers_ids = {"n0", "n1", "n2"};
    ASSERT_EQ(st.append(s), AppendResult::added);
  }
  const std::vector<std::string> ps = {"error", "ERROR", "Error", "err", "or at", "erroré", "rror", "error error",
                                       "飞书", "豈", "status", "strasse", "kelvin", "r\u0301", "ŕ", "ROR\u0301E", "x",
                                       "über", "café", "飞书über"};
  for (std::int64_t pack_bytes : {std::int64_t{1}, std::int64_t{40}, std::int64_t{4} << 20}) {
    {
      Store st = open_store(path_, Store::Mode::read_write);
      update_text_packs(st, 0, true, pack_bytes);
    }
    Store st = open_store(path_, Store::Mode::read_only);
    ASSERT_EQ(text_pack_through(st), st.max_seq());
    for (const std::string& p : ps)
      for (bool icase : {false, true}) {
        GrepOptions o;
        o.pattern = p;
        o.ignore_case = icase;
        expect_same(st, o, false);
        o.regex = true;
        expect_same(st, o, false);
      }
    auto count = [&](const std::string& p, bool icase) {
      GrepOptions o;
      o.pattern = p;
      o.ignore_case = icase;
      o.no_index = true;
      Result r = run(st, o);
      EXPECT_EQ(r.totals.packed_through, st.max_seq());
      return std::make_pair(r.totals.raw_matches, r.totals.summary_matches);
    };
    using P = std::pair<std::int64_t, std::int64_t>;
    EXPECT_EQ(count("error", true), P(5, 1)) << pack_bytes;  // n2 n4 n11 n12 n17 (2nd hit); not n0|n1, n3, n13
    EXPECT_EQ(count("ERROR", false), P(2, 0)) << pack_bytes;  // n3 n17 (bytes, case kept)
    EXPECT_EQ(count("or at", true), P(1, 0)) << pack_bytes;
    EXPECT_EQ(count("飞书", true), P(4, 0)) << pack_bytes;  // n5 n6 n10 n16
    EXPECT_EQ(count("status", true), P(1, 0)) << pack_bytes;
    EXPECT_EQ(count("strasse", true), P(1, 0)) << pack_bytes;
    EXPECT_EQ(count("kelvin", true), P(1, 0)) << pack_bytes;
    EXPECT_EQ(count("豈", true), P(1, 0)) << pack_bytes;
    EXPECT_EQ(count("ŕ", true), P(3, 1)) << pack_bytes;  // n3 n4 n17 and the summary
    // -i literals with other characters: their longest ASCII/CJK run finds candidates, verified.
    EXPECT_EQ(count("über", true), P(2, 0)) << pack_bytes;  // n18, n20 (u + combining diaeresis); not n19
    EXPECT_EQ(count("café", true), P(1, 0)) << pack_bytes;
    EXPECT_EQ(count("erroré", true), P(1, 0)) << pack_bytes;
    if (HasFailure()) break;
  }
}

TEST_F(GrepIndexTest, PacksAreResumedRebuiltAndIgnoredUnderAnotherFormat) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  st.create_session(SessionInfo{"s2"});
  fill(st, 60, 21);
  // A database from before the packs: nothing packed, grep reads the nodes' JSON.
  EXPECT_EQ(text_pack_through(st), 0);
  GrepOptions o;
  o.pattern = "error";
  o.ignore_case = true;
  Result before = run(st, o);
  EXPECT_EQ(before.totals.packed_through, 0);
  PackReport a = update_text_packs(st);
  EXPECT_EQ(a.packed, st.max_seq());
  EXPECT_EQ(update_text_packs(st).packed, 0);  // resumed: nothing new
  fill(st, 10, 22, 60);
  PackReport b = update_text_packs(st);
  EXPECT_EQ(b.packed, st.max_seq() - a.through_seq);
  Result after = run(st, o);
  EXPECT_EQ(after.totals.packed_through, st.max_seq());
  EXPECT_GT(after.totals.raw_matches, 0);
  // Same answer as the JSON scan, page for page.
  GrepOptions json = o;
  json.no_packs = true;
  EXPECT_EQ(after.lines, run(st, json).lines);
  {
    auto q = st.db().prepare("SELECT count(*), sum(nodes) FROM text_pack");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(1), st.max_seq());
  }
  // Another layout is not read, and the next writer repacks everything.
  st.db().exec("UPDATE text_pack_state SET format='pack0'");
  EXPECT_EQ(text_pack_through(st), 0);
  EXPECT_EQ(run(st, o).totals.packed_through, 0);
  PackReport c = update_text_packs(st);
  EXPECT_TRUE(c.repacked);
  EXPECT_EQ(c.packed, st.max_seq());
  PackReport d = update_text_packs(st, 0, true);
  EXPECT_TRUE(d.repacked);
  EXPECT_EQ(d.packed, st.max_seq());
  // A pack whose arrays disagree with its text is an error, never a silent miss.
  st.db().exec("UPDATE text_pack SET nodes = nodes + 1 WHERE id = (SELECT min(id) FROM text_pack)");
  EXPECT_EQ(run(st, o).error, "pack.corrupt");
}

TEST_F(GrepIndexTest, ShortGramIndexAnswersEqualScanAtEdgesAfterAnUpgradeAndWithATail) {
  // One- and two-character patterns with a non-ASCII character come from grep_gram (schema 008).
  // Texts where a gram can mislead: a pair split across two nodes (and so across pack and batch
  // edges), ill-formed UTF-8 (U+FFFD), a CJK compatibility ideograph folding into a unified one,
  // combining marks that compose under folding, emoji modifiers, punctuation next to CJK.
  const std::vector<std::string> texts = {
      "末尾是飞", "书开头", "前文 飞书 后文", std::string(5000, 'x') + "飞书", "\uF900 compat", "\u8C48 unified",
      "Cafe\u0301", "café", "CAFÉ", "か\u3099", "が", "👍🏽 ok", "\"飞书\"(备注)", "飞\n书", "a飞书b", "Ü ü U\u0308",
      "ﬁ and ß", "飞书飞书飞书", "\u3099 alone", "Σ σ ς"};
  const std::vector<std::string> ps = {
      "飞书", "飞", "书", "是飞", "书开", "末尾", "\"飞", "书\"", "(备", "飞\n", "\n书", "a飞", "书b",
      "\xEF\xBF\xBD", "\xEF\xBF\xBD\xEF\xBF\xBD", "\xEF\xBF\xBD" "b", "\u8C48", "\uF900", "é", "e\u0301", "É",
      "ü", "Ü", "が", "か", "\u3099", "👍", "🏽", "👍🏽", "ß", "ς", "Σ", "σ", " 飞", "飞书 ", "x飞", "ok", "\xFF"};
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"s2"});
    std::optional<std::string> pred;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      Node n = msg("g" + std::to_string(i), "s", pred, "user", texts[i]);
      ASSERT_EQ(st.append(n), AppendResult::added);
      pred = n.id;
      ids_.push_back(n.id);
      texts_.push_back(texts[i]);
    }
    fill(st, 60, 21, 0);
    add_bad_utf8(st, "bad");
    update_text_packs(st, 0, false, 200);  // small packs
    IndexReport r = update_text_index(st, false, 100);  // small batches: many gram chunks
    EXPECT_EQ(r.gram_nodes, st.max_seq());
    auto chunks = st.db().prepare("SELECT count(DISTINCT chunk) FROM grep_gram");
    ASSERT_TRUE(chunks.step());
    EXPECT_GT(chunks.int64(0), 5);
  }
  auto compare_all = [&](const char* phase, const char* expect_how) {
    Store st = open_store(path_, Store::Mode::read_only);
    for (const std::string& p : ps)
      for (bool icase : {false, true})
        for (bool all : {false, true}) {
          GrepOptions o;
          o.pattern = p;
          o.ignore_case = icase;
          if (!all) o.session = "s";
          expect_same(st, o, false);
          Result a = run(st, o);
          const bool gram = indexable(o) && !Matcher(p, false, icase).index_query()->gram.empty();
          if (gram && expect_how) EXPECT_EQ(a.totals.index, expect_how) << phase << " '" << p << "' i=" << icase;
          if (gram && !expect_how) EXPECT_EQ(a.totals.index, "scan") << phase << " '" << p << "' i=" << icase;
          if (!indexable(o)) EXPECT_EQ(a.totals.index, "scan") << phase << " '" << p << "' i=" << icase;
          o.scope = summaries_.front();
          o.session.reset();
          expect_same(st, o, false);
          if (HasFailure()) return;
        }
  };
  compare_all("fresh", "grams");
  {
    // A database indexed before schema 008: no grams yet. grep scans short patterns; the next
    // `ctxfold index` adds the grams of every indexed node without indexing any node again.
    Store st = open_store(path_, Store::Mode::read_write);
    st.db().exec("DELETE FROM grep_gram");
    st.db().exec("UPDATE grep_gram_state SET through_seq = 0");
    EXPECT_EQ(text_index_state(st).gram_through, 0);
  }
  compare_all("before the upgrade", nullptr);
  {
    Store st = open_store(path_, Store::Mode::read_only);
    GrepOptions o;
    o.pattern = "飞书";
    o.ignore_case = true;
    EXPECT_EQ(run(st, o).totals.index, "scan");
  }
  {
    Store st = open_store(path_, Store::Mode::read_write);
    IndexReport r = update_text_index(st, false, 100);
    EXPECT_EQ(r.indexed, 0);
    EXPECT_EQ(r.gram_nodes, st.max_seq());
    EXPECT_EQ(text_index_state(st).gram_through, st.max_seq());
    // A tail after the index: scanned after the grams' hits.
    for (std::size_t i = 0; i < texts.size(); ++i) {
      Node n = msg("t" + std::to_string(i), "s", std::nullopt, "assistant", texts[i]);
      ASSERT_EQ(st.append(n), AppendResult::added);
    }
  }
  compare_all("with a tail", "grams");
  {
    Store st = open_store(path_, Store::Mode::read_write);
    IndexReport r = update_text_index(st, true);  // --rebuild clears and refills the grams
    EXPECT_EQ(r.gram_nodes, st.max_seq());
    GrepOptions o;
    o.pattern = "飞书";
    o.ignore_case = true;
    o.session = "s";
    Result a = run(st, o);
    EXPECT_EQ(a.totals.index, "grams");
    EXPECT_EQ(a.totals.indexed_through, st.max_seq());
    EXPECT_GT(a.totals.raw_matches, 5);
    // A corrupt posting list is an error, never an empty answer.
    st.db().exec("UPDATE grep_gram SET seqs = x'80' WHERE gram = '飞书'");
    EXPECT_EQ(run(st, o).error, "gram.corrupt");
  }
}

TEST_F(GrepIndexTest, CaseSensitiveThreeCharactersUseTheIndexAndManyUnverifiedHitsScan) {
  // Three ASCII characters, case-sensitive: the index is asked for the folded form, or its last
  // character composed with the marks that follow it in the text (c + U+0301 folds to ć, < +
  // U+0338 to ≮, c + U+0327 + U+0301 to ḉ); every hit is verified. Past max_verified unverified
  // hits grep scans instead, with the same answers.
  const std::vector<std::string> texts = {"abc\u0301 one", "ABC\u0301 two", "xab<\u0338 three", "Abc\u0327\u0301 four",
                                          "abc plain", "aBc mixed", "ab\u00E7 precomposed", "Kab kelvin \u212Aab"};
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"s2"});
    for (std::size_t i = 0; i < texts.size(); ++i) {
      Node n = msg("c" + std::to_string(i), "s", std::nullopt, "user", texts[i]);
      ASSERT_EQ(st.append(n), AppendResult::added);
      ids_.push_back(n.id);
      texts_.push_back(texts[i]);
    }
    fill(st, 80, 31, 0);
    update_text_index(st, false);
  }
  Store st = open_store(path_, Store::Mode::read_only);
  for (const char* p : {"abc", "ABC", "Abc", "ab<", "b<\u0338", "aBc", "ab\u00E7", "Kab", "\u212Aab", "err", "Err", "ror",
                        "gen", "it'", "\"q\"", "---", "a\"b"}) {
    GrepOptions o;
    o.pattern = p;
    const bool three_ascii = std::string(p).size() == 3;
    expect_same(st, o, three_ascii);
    Result a = run(st, o);
    if (three_ascii) EXPECT_EQ(a.totals.index, "fts5") << p;
    o.max_verified = 0;  // any unverified hit: scan
    expect_same(st, o, false);
    Result b = run(st, o);
    if (three_ascii && b.totals.raw_matches + b.totals.summary_matches > 0) EXPECT_EQ(b.totals.index, "scan") << p;
    if (HasFailure()) return;
  }
  GrepOptions o;
  o.pattern = "abc";
  Result r = run(st, o);
  EXPECT_EQ(r.totals.raw_matches, 2);  // "abc\u0301 one" (its fold holds abć, not abc) and "abc plain"
  EXPECT_EQ(r.totals.index, "fts5");
}

TEST_F(GrepIndexTest, AllSessionsSplitsHitsIntoRawAndViewsWithAndWithoutTheViewIndex) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"s2"});
    fill(st, 160, 5);
    update_text_index(st, false);
  }
  for (bool dropped : {false, true}) {
    if (dropped) {  // as a database indexed before schema 010 reads: the old split
      Store w = open_store(path_, Store::Mode::read_write);
      w.db().exec("DROP INDEX node_text_views");
    }
    Store st = open_store(path_, Store::Mode::read_only);
    for (const char* p : {"error", "summary", "飞书", "gen-itgc", "ERROR"}) {
      for (bool icase : {false, true}) {
        for (GrepIn in : {GrepIn::both, GrepIn::raw, GrepIn::summaries}) {
          GrepOptions o;
          o.pattern = p;
          o.ignore_case = icase;
          o.in = in;
          expect_same(st, o, true);
          o.limit = 0;
          expect_same(st, o, true);
        }
      }
    }
    GrepOptions o;
    o.pattern = "summary";
    o.in = GrepIn::summaries;
    Result r = run(st, o);
    EXPECT_GT(r.totals.summary_matches, 0) << "dropped=" << dropped;
    EXPECT_EQ(r.totals.raw_matches, 0);
  }
}

TEST_F(GrepIndexTest, StaleIndexIsUsedForWhatItCoversAndTheTailIsScanned) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"s2"});
    fill(st, 120, 5);
    update_text_index(st, false);
    fill(st, 60, 6, 120);  // appended after the index: the unindexed tail
    add_bad_utf8(st, "bad");
  }
  Store st = open_store(path_, Store::Mode::read_only);
  TextIndexState ix = text_index_state(st);
  ASSERT_TRUE(ix.fts);
  EXPECT_LT(ix.through_seq, st.max_seq());
  for (GrepOptions o : patterns(9)) {
    const bool use_index = indexable(o);
    expect_same(st, o, use_index);
    if (HasFailure()) break;
  }
  GrepOptions o;
  o.pattern = "error tail";
  o.session = "s";
  Result r = run(st, o);
  EXPECT_EQ(r.totals.indexed_through, ix.through_seq);
  EXPECT_GT(r.totals.raw_matches, 0);
}

TEST_F(GrepIndexTest, IndexIsResumedNotRedoneAndRebuildClearsIt) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  st.create_session(SessionInfo{"s2"});
  fill(st, 50, 2);
  IndexReport a = update_text_index(st, false);
  EXPECT_GT(a.indexed, 50);
  IndexReport b = update_text_index(st, false);
  EXPECT_EQ(b.indexed, 0);
  EXPECT_EQ(b.through_seq, a.through_seq);
  fill(st, 10, 3, 50);
  IndexReport c = update_text_index(st, false);
  EXPECT_EQ(c.indexed, st.max_seq() - a.through_seq);
  IndexReport d = update_text_index(st, true);
  EXPECT_TRUE(d.rebuilt);
  EXPECT_EQ(d.indexed, st.max_seq());
  {
    auto q = st.db().prepare("SELECT count(*) FROM node_text");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), st.max_seq());
  }
  // A fold version from another Unicode: grep does not trust it, the next index run rebuilds.
  st.db().exec("UPDATE text_index_state SET fold_version='fold1/unicode-0.0'");
  EXPECT_FALSE(text_index_state(st).fts);
  EXPECT_FALSE(text_index_state(st).fts_unusable.empty());
  GrepOptions o;
  o.pattern = "error";
  o.session = "s";
  EXPECT_EQ(run(st, o).totals.index, "scan");
  IndexReport e = update_text_index(st, false);
  EXPECT_TRUE(e.rebuilt);
  EXPECT_TRUE(text_index_state(st).fts);
}

TEST_F(GrepIndexTest, ReadOnlyGrepOnAStaleIndexWritesNothing) {
  {
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    st.create_session(SessionInfo{"s2"});
    fill(st, 30, 4);
    update_text_index(st, false);
    fill(st, 30, 5, 30);
    st.db().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  auto before = fs::last_write_time(path_);
  auto size = fs::file_size(path_);
  {
    Store st = open_store(path_, Store::Mode::read_only);
    GrepOptions o;
    o.pattern = "error";
    o.session = "s";
    EXPECT_GT(run(st, o).totals.raw_matches, 0);
  }
  EXPECT_EQ(fs::last_write_time(path_), before);
  EXPECT_EQ(fs::file_size(path_), size);
}

// ------------------------------------------------------------------ expand with stored lengths

TEST_F(GrepIndexTest, ExpandSeeksByStoredLengthsAndPagesAreUnchanged) {
  Store st = open_store(path_, Store::Mode::read_write);
  st.create_session(SessionInfo{"s"});
  std::vector<std::string> ids;
  std::optional<std::string> pred;
  std::string want;
  for (int i = 0; i < 120; ++i) {
    std::string text = "row " + std::to_string(i) + " 飞书 e\u0301 🇫🇷 " + std::string(static_cast<std::size_t>(i % 13), 'x');
    Node n = msg("t" + std::to_string(i), "s", pred, "user", text);
    ASSERT_EQ(st.append(n), AppendResult::added);
    ids.push_back(n.id);
    pred = n.id;
    want += (i ? "\n\n" : "") + text;
  }
  Node s = msg("S", "s", std::nullopt, "user", "summary");
  s.kind = kind::kSummary;
  s.covers_ids = ids;
  ASSERT_EQ(st.append(s), AppendResult::added);
  auto pages = [&](std::int64_t limit) {
    std::vector<std::string> out;
    for (std::int64_t off = 0;;) {
      ExpandPage p = expand(st, "S", off, limit);
      std::string page;
      for (const ExpandRow& r : p.rows) page += r.id + ":" + r.text + "|";
      out.push_back(page);
      if (!p.next_offset) break;
      off = *p.next_offset;
    }
    return out;
  };
  auto before7 = pages(7), before100 = pages(100);
  update_text_index(st, false);
  EXPECT_EQ(pages(7), before7);
  EXPECT_EQ(pages(100), before100);
  EXPECT_EQ(resolve_coverage(st, "S").row_graphemes.at(3), static_cast<std::int64_t>(grapheme_count(
                                                                 "row 3 飞书 e\u0301 🇫🇷 xxx")));
  // The stored length is what positions the page: shift row t0's stored length by one and a page
  // after it starts one grapheme later (so the rows before it were not read).
  ExpandPage deep = expand(st, "S", 500, 40);
  st.db().exec("UPDATE node_text SET graphemes = graphemes + 1 WHERE seq = 1");
  ExpandPage shifted = expand(st, "S", 500, 40);
  ASSERT_FALSE(deep.rows.empty());
  ASSERT_FALSE(shifted.rows.empty());
  EXPECT_NE(deep.rows[0].text, shifted.rows[0].text);
}

}  // namespace
}  // namespace ctxfold
