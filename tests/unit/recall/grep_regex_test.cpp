// grep --regex in RE2 syntax (lib/recall/grep.hpp Matcher): lines of tens of kilobytes that
// std::regex overflowed its stack on, matching line by line, -i folding like the literal path,
// the errors RE2 gives for what it does not support, and the required literals of RE2 syntax.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "recall/grep.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

std::optional<std::size_t> at(const std::string& pattern, const std::string& text, bool icase = false) {
  return Matcher(pattern, true, icase).find_grapheme(text);
}

// A tool result often holds one line of 20-50 KB: the patterns of the crash report, matched
// (and not matched) in linear time with a bounded stack.
TEST(GrepRegexTest, LinesOfFiftyKilobytesDoNotOverflow) {
  const std::string as(50000, 'A');
  const std::string text = "x" + as + "Z\n" + std::string(50000, 'y');
  for (bool icase : {false, true}) {
    EXPECT_EQ(at("x|A+", text, icase), 0u) << icase;
    EXPECT_EQ(at("A.*Z", text, icase), 1u) << icase;
    EXPECT_EQ(at("y+", text, icase), 50003u) << icase;
    EXPECT_EQ(at("A+Z$", as + "Z", icase), 0u) << icase;
    EXPECT_FALSE(at("(A|AA)*B", as, icase)) << icase;  // exponential for a backtracking engine
    EXPECT_FALSE(at("y+x", text, icase)) << icase;
  }
}

TEST(GrepRegexTest, MatchesLineByLine) {
  EXPECT_EQ(at("^b", "a\nb"), 2u);
  EXPECT_EQ(at("a$", "a\nb"), 0u);
  EXPECT_FALSE(at("a\\sb", "a\nb"));  // \s never matches the line break
  EXPECT_FALSE(at("a[^x]b", "a\nb"));
  EXPECT_EQ(at("a\\sb", "a\nx a b"), 4u);
  EXPECT_EQ(at("\\Ab", "a\nb"), 2u);  // \A and \z anchor at each line's edges
  EXPECT_EQ(at("a\\z", "a\nb"), 0u);
  EXPECT_EQ(at("(?-m)^b", "a\nb"), 2u);
  EXPECT_EQ(at("b+", "aaa\nxbb\nb"), 5u);  // the first match, on its line
  EXPECT_EQ(at("x*", "\n"), 0u);           // an empty match on an empty line
  EXPECT_EQ(at("é+", "a\nxéé"), 3u);       // offsets in graphemes
}

// Under -i a regex of plain characters finds what the literal search finds (Unicode folding:
// ß and ss, the Kelvin sign and k, final sigma, composed and decomposed accents).
TEST(GrepRegexTest, CaseFoldingAgreesWithTheLiteralPath) {
  const std::vector<std::string> texts = {"STRASSE", "straße", "Über alles", "u\u0308ber", "\u212Aelvin", "kelvin",
                                          "ΣΊΣΥΦΟΣ", "σίσυφος", "Error: x", "nothing here"};
  for (const char* p : {"straße", "über", "KELVIN", "σίσυφοσ", "ERROR", "Üb", "ss"}) {
    const Matcher lit(p, false, true), re(p, true, true);
    for (const std::string& t : texts) EXPECT_EQ(lit.find_grapheme(t), re.find_grapheme(t)) << p << " in " << t;
  }
  EXPECT_EQ(at("ÜBER\\s+ALLES", "über alles", true), 0u);
  EXPECT_FALSE(at("ÜBER\\s+ALLES", "über alles"));
}

Error refusal(const std::string& pattern) {
  try {
    Matcher m(pattern, true, false);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::usage) << pattern;
    EXPECT_EQ(e.code(), "grep.bad_pattern") << pattern;
    return e;
  }
  ADD_FAILURE() << "accepted " << pattern;
  return Error(Exit::internal, "test.none", "none");
}

TEST(GrepRegexTest, WhatRe2RefusesIsAUsageErrorSayingWhy) {
  Error back = refusal("(a)b\\1");
  EXPECT_NE(std::string(back.what()).find("at character 5"), std::string::npos) << back.what();
  EXPECT_NE(back.hint().find("backreferences"), std::string::npos) << back.hint();
  for (const char* look : {"a(?=b)", "a(?!b)", "(?<=a)b"}) {
    Error e = refusal(look);
    EXPECT_NE(e.hint().find("lookaround"), std::string::npos) << look << ": " << e.hint();
  }
  Error open = refusal("x(unclosed");
  EXPECT_NE(std::string(open.what()).find("missing )"), std::string::npos) << open.what();
  EXPECT_EQ(std::string(open.what()).find("at character"), std::string::npos) << open.what();  // RE2 names it all
  EXPECT_NE(std::string(refusal("x{3000}").what()).find("invalid repetition size"), std::string::npos);
  std::string big;
  for (int i = 0; i < 10; ++i) big += "[\\pL\\pN]{1000}";
  Error large = refusal(big);  // a program over the memory budget
  EXPECT_NE(std::string(large.what()).find("pattern too large"), std::string::npos) << large.what();
  EXPECT_NE(large.hint().find("32 MiB"), std::string::npos) << large.hint();
}

TEST(GrepRegexTest, RequiredLiteralsOfRe2Syntax) {
  using V = std::vector<std::string>;
  EXPECT_EQ(regex_required_literals("\\Qa.b|c\\E!"), V({"a.b|c!"}));
  EXPECT_EQ(regex_required_literals("\\Qab\\E*c"), V({"a", "c"}));  // the quantifier takes the last character
  EXPECT_EQ(regex_required_literals("(?i)abc"), V());               // no longer byte for byte
  EXPECT_EQ(regex_required_literals("x(?i:abc)yz"), V());
  EXPECT_EQ(regex_required_literals("(?s)abc"), V({"abc"}));
  EXPECT_EQ(regex_required_literals("(?P<id>x)yz"), V({"yz"}));
  EXPECT_EQ(regex_required_literals("\\pLabc"), V({"abc"}));
  EXPECT_EQ(regex_required_literals("\\p{Greek}abc"), V({"abc"}));
  EXPECT_EQ(regex_required_literals("\\x41bc"), V({"bc"}));
  EXPECT_EQ(regex_required_literals("\\x{41}bc"), V({"bc"}));
  EXPECT_EQ(regex_required_literals("\\101bc"), V({"bc"}));
  EXPECT_EQ(regex_required_literals("[]a]bc"), V({"bc"}));
  EXPECT_EQ(regex_required_literals("[^]a]bc"), V({"bc"}));
  EXPECT_EQ(regex_required_literals("[[:alpha:]]bc"), V({"bc"}));
}

// Soundness: whatever the expression matches holds every literal it is said to require.
TEST(GrepRegexTest, RequiredLiteralsAreInEveryMatch) {
  const std::vector<std::string> texts = {"abc",     "a.b|c!", "ac",    "Abc",   "ABC",     "xabcyz", "Ab",
                                          "bc",      "]bc",    "1bc",   "αbc",   "colour",  "color",  "x\ny",
                                          "run.py",  "a{2}",   "aab",   "\\Qx",  "TODO: x fix"};
  for (const char* p : {"\\Qa.b|c\\E!", "\\Qab\\E*c", "(?i)abc", "\\pLbc", "\\x41bc", "\\101bc", "[]a]bc", "[[:alpha:]]bc",
                        "colou?r", "a{2}b", "a{0}b", "run\\.py", "TODO: .*fix$", "x(?:y)?z*", "\\x{3b1}bc", "ab??c"}) {
    const Matcher m(p, true, false);
    for (const std::string& t : texts) {
      if (!m.matches(t)) continue;
      for (const std::string& lit : regex_required_literals(p))
        EXPECT_NE(t.find(lit), std::string::npos) << p << " matched '" << t << "' without '" << lit << "'";
    }
  }
}

}  // namespace
}  // namespace ctxfold
