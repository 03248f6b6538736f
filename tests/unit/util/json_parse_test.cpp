// parse_json and sax_parse_json (lib/util/json.cpp) read through simdjson where they can: the
// values and SAX events must be exactly nlohmann's, kinds of numbers and repeated keys included,
// and texts nlohmann refuses must still be refused with its message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "transcript_records.hpp"
#include "util/json.hpp"
#include "util/json_sax.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

/// The same value with the same kind at every place (nlohmann's == takes 1 and 1u as equal).
bool same_kinds(const Json& a, const Json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
      if (i.key() != j.key() || !same_kinds(*i, *j)) return false;
  } else if (a.is_array()) {
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!same_kinds(a[k], b[k])) return false;
  }
  return true;
}

/// The events of one text as a string.
struct Log : JsonEvents {
  std::string s;
  bool null() override { return add("n"); }
  bool boolean(bool b) override { return add(b ? "t" : "f"); }
  bool number_integer(std::int64_t v) override { return add("i" + std::to_string(v)); }
  bool number_unsigned(std::uint64_t v) override { return add("u" + std::to_string(v)); }
  bool number_float(double v) override { return add("d" + Json(v).dump()); }
  bool string(std::string_view v) override { return add("s" + std::string(v)); }
  bool key(std::string_view k) override { return add("k" + std::string(k)); }
  bool start_object() override { return add("{"); }
  bool end_object() override { return add("}"); }
  bool start_array() override { return add("["); }
  bool end_array() override { return add("]"); }
  bool add(const std::string& e) {
    s += e;
    s += '\x1f';
    return true;
  }
};

/// nlohmann's own SAX events into a Log.
struct NlohmannLog {
  Log log;
  bool null() { return log.null(); }
  bool boolean(bool b) { return log.boolean(b); }
  bool number_integer(Json::number_integer_t v) { return log.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return log.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return log.number_float(v); }
  bool string(Json::string_t& v) { return log.string(v); }
  bool binary(Json::binary_t&) { return false; }
  bool start_object(std::size_t) { return log.start_object(); }
  bool key(Json::string_t& k) { return log.key(k); }
  bool end_object() { return log.end_object(); }
  bool start_array(std::size_t) { return log.start_array(); }
  bool end_array() { return log.end_array(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};

/// Empty when parse_json and sax_parse_json agree with nlohmann on text, else what differs.
std::string differs(std::string_view text) {
  Json mine, theirs;
  std::string my_error, their_error;
  try {
    mine = parse_json(text);
  } catch (const std::exception& e) {
    my_error = e.what();
  }
  try {
    theirs = Json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    their_error = e.what();
  }
  if (my_error != their_error) return "error '" + my_error + "' vs '" + their_error + "'";
  if (my_error.empty() && (mine != theirs || !same_kinds(mine, theirs) || dump_json(mine) != dump_json(theirs)))
    return "value " + dump_json(mine) + " vs " + dump_json(theirs);
  Log a;
  NlohmannLog b;
  const bool ra = sax_parse_json(text, a);
  const bool rb = Json::sax_parse(text.begin(), text.end(), &b);
  if (ra != rb || a.s != b.log.s) return "SAX events differ";
  return {};
}

TEST(JsonParse, EdgeCasesReadAsNlohmannReadsThem) {
  const std::vector<std::string> cases = {
      "-0", "[-0]", "{\"a\":-0}", "-0.0", "[0,-0e0]", "0", "5", "-5", "18446744073709551615", "18446744073709551616",
      "-9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "1e999", "1e-400",
      "1.0", "1E2", "0.1", "1e22", "4.9e-324", "1.7976931348623157e308", "\"\\ud800\"", "\"\\udc00x\"",
      "\"\\ud83d\\ude00\"", "\"\\\\ud800\"", "{\"a\":1,\"a\":2,\"b\":3}", "{\"a\":1,\"b\":2,\"a\":{\"x\":[1]}}",
      "\xEF\xBB\xBF{}", "  {} ", "{} x", "[1,]", "\"\\u0000\"", "\"a\tb\"", "\"\xff\"", "01", "", " ", "nul",
      "true", "{\"\":\"\"}", "[[[[[]]]]]", "{\"k\\u00e9y\":\"v\\n\"}", "{\"t\":\"2026-01-05\",\"n\":-0}",
      std::string(2 << 20, ' ') + "[\"" + std::string(1 << 20, 'x') + "\"]"};
  for (const std::string& c : cases) EXPECT_EQ(differs(c), "") << c.substr(0, 60);
}

TEST(JsonParse, EveryRecordOfTheRealTranscriptsReadsAsNlohmannReadsIt) {
  const std::string dir = CTXFOLD_TRANSCRIPTS_DIR;
  if (!fs::exists(dir)) GTEST_SKIP() << "no transcripts at " << dir;
  std::size_t records = 0;
  test_data::for_each_transcript_file(dir, [&](const fs::path& path, const std::string& whole) {
    EXPECT_EQ(differs(whole), "") << path;
    test_data::for_each_line(whole, [&](std::size_t line, std::string_view text) {
      EXPECT_EQ(differs(text), "") << path << ":" << line;
      ++records;
    });
  });
  EXPECT_GT(records, 1000u);
}

}  // namespace
}  // namespace ctxfold
