#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "import/jsonl_reader.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

struct Warned {
  std::int64_t line;
  std::string code;
};

class JsonlReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-jsonl-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& bytes) {
    std::string p = (dir_ / "in.jsonl").string();
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

  std::vector<JsonlRecord> read_all(const std::string& path,
                                    std::uint64_t max_line = JsonlReader::kDefaultMaxRecord) {
    warnings.clear();
    bad.clear();
    JsonlReader r(
        path, [&](std::int64_t line, const std::string& code, const std::string&) { warnings.push_back({line, code}); },
        [&](std::int64_t line, const std::string& raw) { bad.emplace_back(line, raw); }, max_line);
    std::vector<JsonlRecord> out;
    JsonlRecord rec;
    int guard = 0;
    while (r.next(rec) && guard++ < 1000000) out.push_back(rec);
    return out;
  }

  int count(const std::string& code) const {
    int n = 0;
    for (const auto& w : warnings) n += w.code == code;
    return n;
  }

  fs::path dir_;
  std::vector<Warned> warnings;
  std::vector<std::pair<std::int64_t, std::string>> bad;
};

TEST_F(JsonlReaderTest, ReadsLinesWithOffsetsAndSkipsBlankLines) {
  std::string p = write("{\"a\":1}\n\n   \n{\"b\":2}\r\n{\"c\":3}\n");
  auto recs = read_all(p);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].line, 1);
  EXPECT_EQ(recs[0].offset, 0u);
  EXPECT_EQ(recs[0].length, 7u);
  EXPECT_EQ(recs[1].line, 4);
  EXPECT_EQ(recs[1].offset, 13u);
  EXPECT_EQ(recs[1].value["b"], 2);
  EXPECT_EQ(recs[2].line, 5);
  EXPECT_EQ(recs[2].value["c"], 3);
  EXPECT_TRUE(warnings.empty());
  JsonlReader r(p, {});
  EXPECT_EQ(r.read_at(recs[1].offset, recs[1].length)["b"], 2);
  EXPECT_EQ(r.read_at(recs[2].offset, recs[2].length)["c"], 3);
}

// A line of 500 NUL bytes between 100 and 100 valid lines.
TEST_F(JsonlReaderTest, NulLineIsReportedWithItsLineNumberAndEveryRecordKept) {
  std::string bytes;
  for (int i = 0; i < 100; ++i) bytes += "{\"i\":" + std::to_string(i) + "}\n";
  bytes += std::string(500, '\0') + "\n";
  for (int i = 100; i < 200; ++i) bytes += "{\"i\":" + std::to_string(i) + "}\n";
  auto recs = read_all(write(bytes));
  ASSERT_EQ(recs.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(recs[i].value["i"], i);
  EXPECT_EQ(recs[100].line, 102);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "line.nul");
  EXPECT_EQ(warnings[0].line, 101);
}

TEST_F(JsonlReaderTest, NulBytesInsideALineAreStrippedAndReported) {
  std::string bytes = std::string("{\"a\":") + '\0' + "7}\n";
  auto recs = read_all(write(bytes));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].value["a"], 7);
  EXPECT_EQ(count("line.nul"), 1);
}

// Two records glued on one line, split honouring strings and escapes.
TEST_F(JsonlReaderTest, GluedRecordsAreSplitHonouringStringsAndEscapes) {
  std::string line = R"({"a":"}{ \"q\" [","n":{"x":[1,2]}}{"b":"\\"}  {"c":3})";
  std::string p = write("{\"z\":0}\n" + line + "\n");
  auto recs = read_all(p);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[1].value["a"], "}{ \"q\" [");
  EXPECT_EQ(recs[1].part, 0);
  EXPECT_EQ(recs[2].value["b"], "\\");
  EXPECT_EQ(recs[2].part, 1);
  EXPECT_EQ(recs[3].value["c"], 3);
  EXPECT_EQ(recs[3].part, 2);
  EXPECT_EQ(recs[3].line, 2);
  EXPECT_EQ(count("line.glued"), 1);
  JsonlReader r(p, {});
  EXPECT_EQ(r.read_at(recs[2].offset, recs[2].length, 1)["b"], "\\");
  EXPECT_EQ(r.read_at(recs[3].offset, recs[3].length, 2)["c"], 3);
  EXPECT_TRUE(r.read_at(recs[3].offset, recs[3].length, 5).is_null());
}

TEST_F(JsonlReaderTest, InvalidUtf8IsReplacedAndReported) {
  std::string bytes = "{\"t\":\"ok \xC3\x28 \xFF end\"}\n{\"u\":\"caf\xC3\xA9\"}\n";
  auto recs = read_all(write(bytes));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].value["t"], "ok \xEF\xBF\xBD( \xEF\xBF\xBD end");
  EXPECT_EQ(recs[1].value["u"], "caf\xC3\xA9");
  EXPECT_EQ(count("utf8.invalid"), 1);
  EXPECT_EQ(warnings[0].line, 1);
}

// JavaScript's JSON.stringify writes lone surrogates as \uD800-\uDFFF escapes; nlohmann::json
// refuses them. Only lone ones become U+FFFD: valid pairs and escaped backslashes stay.
TEST_F(JsonlReaderTest, LoneSurrogateEscapesBecomeReplacementCharacters) {
  std::string bytes =
      "{\"t\":\"a \\ud800 b\"}\n"              // lone high
      "{\"t\":\"\\uDC00x\\ud83d\\ude00\"}\n"   // lone low, then a valid pair
      "{\"t\":\"\\\\ud800 \\ud800\\ud800\"}\n"  // an escaped backslash (text), then two highs
      "{\"t\":\"plain\"}\n";
  auto recs = read_all(write(bytes));
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].value["t"], "a \xEF\xBF\xBD b");
  EXPECT_EQ(recs[1].value["t"], "\xEF\xBF\xBDx\xF0\x9F\x98\x80");
  EXPECT_EQ(recs[2].value["t"], "\\ud800 \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(recs[3].value["t"], "plain");
  EXPECT_EQ(count("json.lone_surrogate"), 3);
  EXPECT_EQ(count("line.malformed"), 0);
  EXPECT_TRUE(bad.empty());
  ASSERT_FALSE(warnings.empty());
  EXPECT_EQ(warnings[0].line, 1);
  // read_at applies the same rule.
  JsonlReader r(write(bytes), {});
  EXPECT_EQ(r.read_at(recs[0].offset, recs[0].length)["t"], "a \xEF\xBF\xBD b");
}

// The last line is cut off mid-object and has no newline.
TEST_F(JsonlReaderTest, TruncatedLastLineIsAWarningAndKeptVerbatim) {
  auto recs = read_all(write("{\"a\":1}\n{\"b\":2}\n{\"c\":\"unfinish"));
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "line.truncated");
  EXPECT_EQ(warnings[0].line, 3);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].second, "{\"c\":\"unfinish");
}

// A cut-off last line, then the later write: a writer appended a whole record right after the
// cut-off fragment.
TEST_F(JsonlReaderTest, RecordGluedOntoACutOffFragmentIsRead) {
  auto recs = read_all(write("{\"a\":1}\n{\"c\":{\"d\":\"unfin{\"e\":{\"f\":[1,2]},\"g\":\"x\"}\n{\"h\":3}\n"));
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[1].value["g"], "x");
  EXPECT_EQ(recs[1].value["e"]["f"][1], 2);
  EXPECT_EQ(recs[2].value["h"], 3);
  ASSERT_EQ(count("line.fragment"), 1);
  EXPECT_EQ(warnings[0].line, 2);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].second, "{\"c\":{\"d\":\"unfin");
}

// A fragment with nothing valid after it is not "resynchronised" onto one of its own inner objects.
TEST_F(JsonlReaderTest, InnerObjectOfAFragmentIsNotTakenForARecord) {
  auto recs = read_all(write("{\"a\":{\"b\":1},\"c\":\"x\n{\"h\":3}\n"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].value["h"], 3);
  EXPECT_EQ(count("line.fragment"), 0);
  EXPECT_EQ(count("line.malformed"), 1);
}

TEST_F(JsonlReaderTest, CompleteLastLineWithoutNewlineParses) {
  auto recs = read_all(write("{\"a\":1}\n{\"b\":2}"));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(JsonlReaderTest, GarbageInTheMiddleIsMalformedAndReadingGoesOn) {
  auto recs = read_all(write("{\"a\":1}\nnot json at all\n{\"broken\":\n{\"b\":2}\n"));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[1].value["b"], 2);
  EXPECT_EQ(count("line.malformed"), 2);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0].first, 2);
  EXPECT_EQ(bad[0].second, "not json at all");
  EXPECT_EQ(bad[1].first, 3);
}

TEST_F(JsonlReaderTest, TooDeepNestingIsRefusedWithoutParsing) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  std::string ok513;
  for (int i = 0; i < 512; ++i) ok513 += "[";
  for (int i = 0; i < 512; ++i) ok513 += "]";
  auto recs = read_all(write("{\"a\":1}\n" + deep + "\n" + ok513 + "\n{\"b\":2}\n"));
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[1].line, 3);  // exactly kMaxDepth levels is allowed
  EXPECT_EQ(recs[2].value["b"], 2);
  EXPECT_EQ(count("line.too_deep"), 1);
  EXPECT_EQ(warnings[0].line, 2);
}

TEST_F(JsonlReaderTest, EmptyFileAndMissingFile) {
  EXPECT_TRUE(read_all(write("")).empty());
  EXPECT_TRUE(read_all(write("\n\n")).empty());
  try {
    JsonlReader r((dir_ / "absent.jsonl").string(), {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "io.open");
    EXPECT_EQ(e.exit(), Exit::environment);
  }
}

TEST_F(JsonlReaderTest, LongLinesAreReadWhole) {
  std::string big(3 * 1024 * 1024, 'x');
  auto recs = read_all(write("{\"img\":\"" + big + "\"}\n{\"n\":1}\n"));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].value["img"].get<std::string>().size(), big.size());
  EXPECT_EQ(recs[1].offset, big.size() + 11);
}

TEST_F(JsonlReaderTest, ALineOverTheRecordLimitIsSkippedWholeAndTheRestRead) {
  // 300 000 bytes: more than four of the reader's 64 KiB blocks, past a 100 000-byte limit.
  const std::string big = "{\"img\":\"" + std::string(300000, 'x') + "\"}";
  const std::string under = "{\"fits\":\"" + std::string(99000, 'y') + "\"}";  // spans two blocks
  const std::string path = write("{\"n\":1}\n" + big + "\n" + under + "\n{\"n\":2}");
  auto recs = read_all(path, 100000);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].line, 1);
  EXPECT_EQ(recs[1].line, 3);
  EXPECT_EQ(recs[1].value["fits"].get<std::string>().size(), 99000u);
  EXPECT_EQ(recs[1].offset, 8 + big.size() + 1);
  EXPECT_EQ(recs[2].line, 4);
  EXPECT_EQ(recs[2].value["n"], 2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].line, 2);
  EXPECT_EQ(warnings[0].code, "line.too_long");
  EXPECT_TRUE(bad.empty()) << "an overlong line is not handed on to be kept";
  // Offsets stay absolute after the skipped line: read_at finds the records.
  JsonlReader r(path, {}, {}, 100000);
  EXPECT_EQ(r.read_at(recs[2].offset, recs[2].length)["n"], 2);
}

TEST_F(JsonlReaderTest, AnOverlongUnterminatedLastLineIsSkipped) {
  auto recs = read_all(write("{\"n\":1}\n" + std::string(5000, 'z')), 1000);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(count("line.too_long"), 1);
}

TEST_F(JsonlReaderTest, ValuesThatAreNotObjectsAreReported) {
  auto recs = read_all(write("[1,2]\n\"s\"\n42\n{\"n\":1}\n"));
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(count("record.not_object"), 3);
  EXPECT_TRUE(recs[0].value.is_array());
}

TEST_F(JsonlReaderTest, NumbersBeyondADoubleAreReadAsStrings) {
  auto recs = read_all(write("{\"a\":1e999,\"b\":[-2E+400],\"c\":\"1e999\",\"d\":1.5}\n"));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].value["a"], "1e999");
  EXPECT_EQ(recs[0].value["b"][0], "-2E+400");
  EXPECT_EQ(recs[0].value["c"], "1e999");
  EXPECT_EQ(recs[0].value["d"], 1.5);
  EXPECT_EQ(count("json.number_range"), 1);
  EXPECT_EQ(count("line.malformed"), 0);
}

TEST_F(JsonlReaderTest, DuplicateKeysAreReportedAndTheLineKept) {
  // Nested objects, an escaped spelling of the same key, and keys that only look alike.
  auto recs = read_all(write("{\"a\":1,\"b\":{\"x\":1,\"y\":2},\"c\":[{\"x\":1},{\"x\":2}]}\n"
                             "{\"m\":{\"k\":1,\"\\u006b\":2}}\n"
                             "{\"a\":1,\"a\":2}\n"));
  ASSERT_EQ(recs.size(), 3u);
  ASSERT_EQ(count("json.duplicate_key"), 2);
  EXPECT_EQ(warnings[0].line, 2);
  EXPECT_EQ(warnings[1].line, 3);
  EXPECT_EQ(recs[2].value["a"], 2);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[1].second, "{\"a\":1,\"a\":2}");
}

TEST(JsonHelpers, DuplicateKeyAndHugeNumbers) {
  EXPECT_FALSE(duplicate_key(R"({"a":{"a":1},"b":"a"})"));
  auto d = duplicate_key(R"({"a":[1,{"q":1,"q":2}]})");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->key, "q");
  // Quotes and backslashes escaped inside strings neither end a string nor start a key.
  EXPECT_FALSE(duplicate_key(R"({"s":"x\\","t":"\"s\":1","u":{"s":2}})"));
  auto esc = duplicate_key(R"({"a\"b":1,"c":"\\\"","a\"b":2})");
  ASSERT_TRUE(esc);
  EXPECT_EQ(esc->key, "a\"b");
  EXPECT_FALSE(duplicate_key(R"({"a":"cut off \)"));
  std::string out;
  std::size_t first = 99;
  EXPECT_EQ(quote_huge_numbers(R"([1, 1e308, "3e999", 4e999])", out, &first), 1u);
  EXPECT_EQ(out, R"([1, 1e308, "3e999", "4e999"])");
  EXPECT_EQ(first, 20u);
}

}  // namespace
}  // namespace ctxfold
