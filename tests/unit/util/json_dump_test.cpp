// dump_json and dump_json_to (lib/util/json.cpp) serialize strings themselves: their bytes must be
// exactly those of nlohmann's dump(-1, ' ', false, error_handler_t::replace), which stored content
// and every digest were made with, for every value: escapes, control bytes, DEL, non-ASCII,
// invalid UTF-8 (nlohmann's U+FFFD rules), numbers of each kind, nesting and key order.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

#include "transcript_records.hpp"
#include "util/digest.hpp"
#include "util/json.hpp"
#include "util/json_digest.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

std::string nlohmann_dump(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

/// The text dump_json_to writes, gathered piece by piece.
struct Gather : JsonSink {
  std::string text;
  void append(const char* p, std::size_t n) override { text.append(p, n); }
};

/// "" when dump_json, dump_json_to and dump_json_sha256 all agree with nlohmann's dump of j,
/// otherwise what differs.
std::string dump_differs(const Json& j) {
  const std::string want = nlohmann_dump(j);
  const std::string got = dump_json(j);
  if (got != want) return "dump_json: " + got.substr(0, 200) + " != " + want.substr(0, 200);
  Gather g;
  dump_json_to(j, g);
  if (g.text != want) return "dump_json_to: " + g.text.substr(0, 200);
  if (dump_json_sha256(j) != sha256_hex(want)) return "dump_json_sha256";
  return "";
}

TEST(JsonDump, EscapesAndValuesAsNlohmannWritesThem) {
  std::string every_byte;
  for (int c = 1; c < 256; ++c) every_byte += static_cast<char>(c);  // invalid UTF-8 from 0x80 on
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  controls += "\x7f/\"\\";
  const Json cases[] = {
      Json(""), Json("plain"), Json(controls), Json(every_byte), Json(std::string("a\0b", 3)),
      Json("\xe2\x86\x92 \xe2\x80\xa6 \xf0\x9f\x98\x80 \xe7\xad\xbe"),  // → … 😀 签
      Json("\xed\xa0\x80"),                                              // a UTF-8 encoded surrogate
      Json("\xc0\xaf"),                                                  // an overlong '/'
      Json("\xf4\x90\x80\x80"),                                          // past U+10FFFF
      Json("cut \xe2\x86"),                                              // a truncated sequence at the end
      Json("\xe2\x86 in the middle \"quoted\" \\ \n\t"),
      Json(std::string(40, '"') + std::string(17, '\\') + std::string(33, '\x01')),
      Json(0), Json(-1), Json(std::numeric_limits<std::int64_t>::min()),
      Json(std::numeric_limits<std::int64_t>::max()), Json(std::numeric_limits<std::uint64_t>::max()),
      Json(0.0), Json(-0.0), Json(1.5), Json(1e300), Json(-2.5e-308), Json(0.1), Json(100.0),
      Json(std::numeric_limits<double>::quiet_NaN()), Json(std::numeric_limits<double>::infinity()),
      Json(true), Json(false), Json(nullptr), Json::object(), Json::array(),
      Json::parse(R"({"b":1,"a":[1,2,{"c\n":"d\u0000"}],"":{},"z":[[]],"é":"\u001f"})"),
      Json::binary({1, 2, 3}),
  };
  for (const Json& j : cases) EXPECT_EQ(dump_differs(j), "") << nlohmann_dump(j).substr(0, 80);
  Json keys = Json::object();
  keys[every_byte] = controls;  // a key that is not valid UTF-8
  keys["\x7f"] = every_byte;
  EXPECT_EQ(dump_differs(keys), "");
}

/// A random string: runs of ASCII, escapes, control bytes, multi-byte characters and, now and then,
/// bytes that make it invalid UTF-8.
std::string random_string(std::mt19937& rng, bool allow_invalid) {
  static const char* pieces[] = {"a",  "hello world ", "\"", "\\",     "\n",           "\t", "\x01", "\x1f", "\x7f",
                                 "/",  "\xc3\xa9",     "\xe2\x86\x92", "\xf0\x9f\x98\x80", "\xe7\xad\xbe", "0123456789abcdef"};
  static const char* invalid[] = {"\x80", "\xff", "\xc3", "\xe2\x86", "\xed\xa0\x80", "\xf8\x88\x80\x80\x80"};
  std::string s;
  const int n = static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) {
    if (allow_invalid && rng() % 50 == 0) s += invalid[rng() % std::size(invalid)];
    else s += pieces[rng() % std::size(pieces)];
  }
  return s;
}

Json random_json(std::mt19937& rng, int depth, bool allow_invalid) {
  switch (depth > 3 ? rng() % 5 : rng() % 7) {
    case 0: return Json(random_string(rng, allow_invalid));
    case 1: return Json(static_cast<std::int64_t>(rng()) - (std::int64_t{1} << 31));
    case 2: return Json(static_cast<double>(static_cast<std::int32_t>(rng())) / 7.0);
    case 3: return rng() % 2 ? Json(nullptr) : Json(rng() % 2 == 0);
    case 4: return Json((static_cast<std::uint64_t>(rng()) << 32) | rng());
    case 5: {
      Json a = Json::array();
      for (int i = static_cast<int>(rng() % 5); i > 0; --i) a.push_back(random_json(rng, depth + 1, allow_invalid));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int i = static_cast<int>(rng() % 5); i > 0; --i) o[random_string(rng, allow_invalid)] = random_json(rng, depth + 1, allow_invalid);
      return o;
    }
  }
}

TEST(JsonDump, RandomTreesAsNlohmannWritesThem) {
  std::mt19937 rng(20261207);
  int invalid_seen = 0;
  for (int i = 0; i < 3000; ++i) {
    const Json j = random_json(rng, 0, i % 3 == 0);
    const std::string d = dump_differs(j);
    ASSERT_EQ(d, "") << "tree " << i << ": " << nlohmann_dump(j).substr(0, 300);
    // nlohmann's replacement character marks a tree whose strings were not valid UTF-8.
    if (nlohmann_dump(j).find("\xef\xbf\xbd") != std::string::npos) ++invalid_seen;
  }
  EXPECT_GT(invalid_seen, 100);  // the invalid path was exercised
}

TEST(JsonDump, EveryRecordOfTheRealTranscriptsDumpsAsNlohmannDumpsIt) {
  const std::string dir = CTXFOLD_TRANSCRIPTS_DIR;
  if (!fs::exists(dir)) GTEST_SKIP() << "no transcripts at " << dir;
  std::size_t records = 0;
  test_data::for_each_transcript_file(dir, [&](const fs::path& path, const std::string& whole) {
    test_data::for_each_line(whole, [&](std::size_t line, std::string_view text) {
      const Json j = Json::parse(text, nullptr, false);
      if (j.is_discarded()) return;
      EXPECT_EQ(dump_differs(j), "") << path << ":" << line;
      ++records;
    });
    const Json doc = Json::parse(whole, nullptr, false);  // a whole .json file (Gemini sessions)
    if (!doc.is_discarded()) EXPECT_EQ(dump_differs(doc), "") << path;
  });
  EXPECT_GT(records, 1000u);
}

}  // namespace
}  // namespace ctxfold
