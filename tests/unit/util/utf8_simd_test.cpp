// utf8_valid reads through simdjson's validator: it must accept exactly what utf8_sanitize (the
// byte-by-byte walk of lib/util/utf8.cpp) leaves unchanged.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "util/utf8.hpp"

namespace ctxfold {
namespace {

bool walk_valid(const std::string& s) {
  std::size_t replaced = 0;
  utf8_sanitize(s, &replaced);
  return replaced == 0;
}

TEST(Utf8Simd, BoundarySequencesAgreeWithTheWalk) {
  const std::vector<std::string> cases = {
      "", "plain ascii", "\xC2\x80", "\xC1\xBF", "\xDF\xBF", "\xE0\xA0\x80", "\xE0\x9F\xBF", "\xED\x9F\xBF",
      "\xED\xA0\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF0\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF", "\xF4\x90\x80\x80",
      "\xF5\x80\x80\x80", "\x80", "\xC2", "\xE2\x82", "abc\xFF", "\xFE", std::string("a\0b", 3), "签名校验失败"};
  for (const std::string& c : cases) EXPECT_EQ(utf8_valid(c), walk_valid(c)) << c;
}

TEST(Utf8Simd, RandomTextsAgreeWithTheWalk) {
  std::mt19937 rng(7);
  const std::string pieces[] = {"a", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "\x80", "\xC3", "\xED\xA0\x80",
                                "\xF4\x90\x80\x80", "\xE0\x80\x80", " ", "\xEF\xBF\xBD"};
  int valid = 0, invalid = 0;
  for (int k = 0; k < 4000; ++k) {
    std::string s;
    const int n = static_cast<int>(rng() % 200);
    const bool clean = rng() % 2;
    for (int i = 0; i < n; ++i) {
      const std::size_t pick = rng() % (clean ? 4 : 11);
      s += pieces[pick == 3 ? 3 : pick];
    }
    const bool w = walk_valid(s);
    (w ? valid : invalid)++;
    ASSERT_EQ(utf8_valid(s), w) << k;
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(invalid, 100);
}

}  // namespace
}  // namespace ctxfold
