// Interner (lib/util/interner.hpp) and Chunked (lib/util/chunked.hpp): the compact structures the
// Claude Code importer's skeleton is made of. Every string comes back byte for byte under its id,
// whatever its length (the varint length prefix, a string in its own block, block boundaries),
// and a Chunked sequence keeps its elements in place while it grows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/chunked.hpp"
#include "util/interner.hpp"

namespace ctxfold {
namespace {

TEST(Interner, EveryLengthComesBackUnderOneId) {
  Interner in;
  EXPECT_EQ(in.intern(""), 0u);
  EXPECT_EQ(in.view(0), "");
  std::vector<std::string> strings;
  // Lengths across the 1- and 2-byte length prefixes, and past a quarter block (own block).
  for (std::size_t n : {1, 2, 36, 127, 128, 129, 300, 16383, 16384, 70000, 262144, 262145, 1 << 20, (1 << 20) + 5})
    strings.push_back(std::string(n, static_cast<char>('a' + n % 26)) + "|" + std::to_string(n));
  // Enough short ids to fill several 1 MiB blocks (each string's bytes end near a block's end).
  for (int i = 0; i < 120000; ++i) strings.push_back("id-" + std::to_string(i * 7919) + std::string(i % 40, 'x'));
  std::vector<std::uint32_t> ids;
  for (const auto& s : strings) ids.push_back(in.intern(s));
  for (std::size_t k = 0; k < strings.size(); ++k) {
    ASSERT_EQ(in.view(ids[k]), strings[k]) << k;
    ASSERT_EQ(in.intern(strings[k]), ids[k]) << k;  // the same id again
  }
  EXPECT_EQ(in.size(), strings.size() + 1);
  EXPECT_EQ(in.str(ids[3]), strings[3]);
}

TEST(Interner, FindAnswersWithoutAdding) {
  Interner in;
  EXPECT_EQ(in.find("toolu_01"), 0u);  // empty interner
  std::vector<std::uint32_t> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(in.intern("toolu_01" + std::to_string(i)));  // grows the index
  const std::size_t size = in.size();
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(in.find("toolu_01" + std::to_string(i)), ids[i]) << i;
  EXPECT_EQ(in.find("toolu_015000"), 0u);
  EXPECT_EQ(in.find("toolu_0"), 0u);
  EXPECT_EQ(in.find(""), 0u);
  EXPECT_EQ(in.size(), size);  // nothing added
}

TEST(Interner, EmbeddedNulAndHighBytes) {
  Interner in;
  const std::string a("a\0b", 3), b("a\0c", 3), c("\xff\x80\x7f", 3);
  const auto ia = in.intern(a), ib = in.intern(b), ic = in.intern(c);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(in.view(ia), a);
  EXPECT_EQ(in.view(ib), b);
  EXPECT_EQ(in.view(ic), c);
}

struct Rec {
  std::int64_t a = 0;
  std::uint32_t b = 0;
};

TEST(Chunked, IndexesLikeAVectorAndNeverMoves) {
  Chunked<Rec, 4> c;  // 16 elements a chunk: many chunks in a small test
  EXPECT_TRUE(c.empty());
  std::vector<const Rec*> where;
  for (int i = 0; i < 1000; ++i) {
    c.push_back(Rec{i * 3, static_cast<std::uint32_t>(i)});
    where.push_back(&c.back());
  }
  ASSERT_EQ(c.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(c[i].a, i * 3);
    EXPECT_EQ(&c[i], where[i]);  // the element stayed where it was written
  }
  c[17].b = 99;
  std::int64_t sum = 0;
  std::size_t n = 0;
  for (const Rec& r : c) sum += r.a, ++n;
  EXPECT_EQ(n, 1000u);
  EXPECT_EQ(sum, 3LL * 999 * 1000 / 2);
  EXPECT_EQ(c[17].b, 99u);
  c.clear();
  EXPECT_TRUE(c.empty());
  c.push_back(Rec{5, 5});
  EXPECT_EQ(c[0].a, 5);
}

}  // namespace
}  // namespace ctxfold
