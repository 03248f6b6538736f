// LiteralSearch (grep's scan of the text packs) must find exactly what a plain substring search
// finds: in the text itself, or with ascii_icase in the ASCII-lowered text.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "util/literal_search.hpp"

namespace ctxfold {
namespace {

std::string ascii_lowered(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return s;
}

// Bytes that tempt a case-blind compare: letters of both cases, the neighbours of the letter
// ranges whose 0x20 bit differs (@ ` [ { ^ ~ _ DEL), digits, and UTF-8 lead/continuation bytes.
const std::string kAlphabet = std::string("aAbBeErRoOzZ@`[{]}^~_\x7F 09\n") + "\xC3\x9F\xE9\xA3\x9E\xE4\xB9\xA6";

std::string random_bytes(std::mt19937& rng, std::size_t n, std::size_t alphabet) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(kAlphabet[rng() % alphabet]);
  return s;
}

TEST(LiteralSearchTest, FindsWhatAPlainSearchOfTheLoweredTextFinds) {
  std::mt19937 rng(5);
  int found = 0;
  for (int round = 0; round < 4000; ++round) {
    const bool icase = round % 2 == 0;
    const std::size_t alphabet = round % 3 == 0 ? 4 : kAlphabet.size();  // small alphabets: many hits
    std::string hay = random_bytes(rng, rng() % 200, alphabet);
    std::string lit = random_bytes(rng, 1 + rng() % (round % 5 == 0 ? 40 : 5), alphabet);
    if (round % 7 == 0 && hay.size() > 10) lit = hay.substr(rng() % (hay.size() - 5), 1 + rng() % 5);
    if (icase) lit = ascii_lowered(lit);  // the contract: no upper-case ASCII in an icase literal
    LiteralSearch s(lit, icase);
    if (round % 4 == 1) s.learn(random_bytes(rng, rng() % 300, alphabet));  // other compared bytes
    const std::string ref = icase ? ascii_lowered(hay) : hay;
    for (std::size_t from = 0; from <= hay.size() + 1; from += 1 + rng() % 7) {
      const std::size_t want = from > ref.size() ? std::string::npos : ref.find(lit, from);
      ASSERT_EQ(s.find(hay, from), want) << "round " << round << " lit '" << lit << "' hay '" << hay << "' from "
                                         << from;
      found += want != std::string::npos;
    }
  }
  EXPECT_GT(found, 1000);
}

TEST(LiteralSearchTest, LongTextsHitsAtEveryAlignmentOfTheWideBlocks) {
  // Texts of a few hundred to a few thousand bytes (64-byte AVX2 steps, 16-byte SSE2 steps, the
  // byte tail), literals placed at every offset modulo 64 and near the end, both cases.
  std::mt19937 rng(11);
  for (int round = 0; round < 600; ++round) {
    const bool icase = round % 2 == 0;
    std::string hay = random_bytes(rng, 100 + rng() % 3000, kAlphabet.size());
    std::string lit = random_bytes(rng, 1 + rng() % 20, kAlphabet.size());
    if (icase) lit = ascii_lowered(lit);
    const std::size_t at = round % 3 == 0 ? hay.size() - std::min(hay.size(), lit.size() + rng() % 70)
                                          : (rng() % (hay.size() / 64 + 1)) * 64 + static_cast<std::size_t>(round % 64);
    if (at + lit.size() <= hay.size()) hay.replace(at, lit.size(), icase && round % 4 == 0 ? [&] {
      std::string u = lit;
      for (char& c : u)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      return u;
    }() : lit);
    LiteralSearch s(lit, icase);
    if (round % 3 == 1) s.learn(hay);
    const std::string ref = icase ? ascii_lowered(hay) : hay;
    for (std::size_t from = 0; from <= hay.size(); from += 1 + rng() % 97) {
      ASSERT_EQ(s.find(hay, from), ref.find(lit, from)) << "round " << round << " lit '" << lit << "' from " << from;
    }
  }
}

TEST(LiteralSearchTest, CaseBlindOnlyForAsciiLetters) {
  LiteralSearch s("`a{", true);
  EXPECT_EQ(s.find("@A[ `A{"), 4u);  // '@' and '[' differ from '`' and '{' by 0x20 only
  EXPECT_EQ(s.find("@A["), std::string_view::npos);
  LiteralSearch exact("Error", false);
  EXPECT_EQ(exact.find(std::string(40, 'x') + "ERROR error Error"), 52u);
  LiteralSearch cjk("飞书", true);
  EXPECT_EQ(cjk.find(std::string(33, 'a') + "飞书"), 33u);
  EXPECT_EQ(cjk.find("飞"), std::string_view::npos);
  // Long texts: hits in the 16-byte blocks, across them and in the byte-by-byte tail.
  std::string big(1000, 'e');
  for (std::size_t at : {0u, 15u, 16u, 31u, 500u, 990u}) {
    std::string h = big;
    h.replace(at, 5, "ERROR");
    LiteralSearch e("error", true);
    e.learn(h);
    EXPECT_EQ(e.find(h), at);
    EXPECT_EQ(e.find(h, at + 1), std::string_view::npos);
  }
}

}  // namespace
}  // namespace ctxfold
