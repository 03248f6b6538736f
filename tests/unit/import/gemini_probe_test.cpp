// The Gemini importer's first pass over a live recording reads each plain message record with a
// SAX probe instead of a tree (lib/import/gemini/live.hpp RecordProbe); it must read what the
// tree does: the message id, the call ids its functionResponse parts answer, and which records
// are plain (the others are read again whole).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "import/gemini/live.hpp"
#include "import/gemini/messages.hpp"
#include "transcript_records.hpp"
#include "util/json.hpp"
#include "util/json_sax.hpp"

namespace ctxfold::gemini_probe_test {

using gemini_detail::RecordProbe;

RecordProbe::Seen probe_text(std::string_view text, bool& valid) {
  RecordProbe p;
  p.reset();
  valid = sax_parse_json(text, p);
  return p.seen();
}

/// The tree's reading of which records are plain: gemini.cpp's record() dispatch (written out
/// again here) and the importer's own odd_field.
bool plain_by_tree(const Json& v) {
  if (!v.is_object()) return false;
  auto has = [&](const char* k) { return v.contains(k); };
  if (has("sessionId") && !has("type")) return false;
  if (has("$set") || has("$rewindTo")) return false;
  const bool named = has("id") && v["id"].is_string();
  if (!named && !(has("type") && has("content"))) return false;
  Json m = v;
  if (!named) m["id"] = "anonymous";  // as record() numbers it before reading its fields
  return gemini_detail::odd_field(m) == nullptr;
}

void expect_as_tree(std::string_view text, const std::string& where) {
  bool valid = false;
  RecordProbe::Seen s = probe_text(text, valid);
  Json v;
  try {
    v = parse_json(text);
  } catch (const std::exception&) {
    EXPECT_FALSE(valid) << where << ": the probe read text the tree refuses";
    return;
  }
  ASSERT_TRUE(valid) << where;
  EXPECT_EQ(s.plain, plain_by_tree(v)) << where;
  EXPECT_EQ(s.calls, gemini_detail::answered_call_ids(v)) << where;
  if (s.plain) {
    EXPECT_EQ(s.anonymous, !(v.contains("id") && v["id"].is_string())) << where;
    if (!s.anonymous) EXPECT_EQ(s.id, json_str(v, "id")) << where;
  }
}

// Records of each shape the first pass meets, with the reading each must get.
TEST(GeminiRecordProbe, EdgeRecordsReadAsTheTreeReadsThem) {
  struct Case {
    const char* text;
    bool plain;
    const char* id;
    std::vector<std::string> calls;
  };
  const std::vector<Case> cases = {
      {R"({"id":"u1","type":"user","content":[{"text":"hi"}]})", true, "u1", {}},
      {R"({"id":"r1","type":"user","content":[{"functionResponse":{"id":"c1","response":{"id":"inner"}}},{"text":"x"}]})",
       true, "r1", {"c1"}},
      // a key twice: its last value counts, wherever it is
      {R"({"id":"a","id":"b","type":"user","content":"x"})", true, "b", {}},
      {R"({"id":"r","type":"user","content":[{"functionResponse":{"id":"c2"},"functionResponse":{"id":"c3"}}]})", true,
       "r", {"c3"}},
      {R"({"id":"r","type":"user","content":[{"functionResponse":{"id":"c2","id":7}}]})", true, "r", {""}},
      {R"({"id":"r","type":"user","content":[{"functionResponse":{"id":"c2"}},{"functionResponse":[1]}],"content":"t"})",
       true, "r", {}},
      // parts nested elsewhere answer nothing; a response without an id answers ""
      {R"({"id":"r","type":"user","content":[[{"functionResponse":{"id":"n"}}],{"text":"t","x":{"functionResponse":{"id":"d"}}},{"functionResponse":{"name":"f"}}]})",
       true, "r", {""}},
      {R"({"type":"user","content":"no id"})", true, "", {}},
      {R"({"id":5,"type":"user","content":"a number id"})", true, "", {}},
      {R"({"id":"n","type":"user","content":null,"toolCalls":null,"thoughts":null})", true, "n", {}},
      // odd field types, header fields, $set, $rewindTo, no message: read whole
      {R"({"id":"o","type":"user","content":5})", false, "", {}},
      {R"({"id":"o","type":7,"content":"x"})", false, "", {}},
      {R"({"id":"o","type":"gemini","content":"x","toolCalls":{}})", false, "", {}},
      {R"({"id":"o","type":"gemini","content":"x","thoughts":"t"})", false, "", {}},
      {R"({"sessionId":"s","projectHash":"p","startTime":"t"})", false, "", {}},
      {R"({"sessionId":"s","id":"x","content":"c"})", false, "", {}},
      {R"({"$set":{"lastUpdated":"t"}})", false, "", {}},
      {R"({"$rewindTo":"u1"})", false, "", {}},
      {R"({"id":"x","$set":3,"type":"user","content":"c"})", false, "", {}},
      {R"({"what":"unknown"})", false, "", {}},
      {R"({"type":"user"})", false, "", {}},
      {R"([1,2])", false, "", {}},
      {R"("text")", false, "", {}},
  };
  for (const Case& c : cases) {
    bool valid = false;
    RecordProbe::Seen s = probe_text(c.text, valid);
    ASSERT_TRUE(valid) << c.text;
    EXPECT_EQ(s.plain, c.plain) << c.text;
    if (c.plain && *c.id) EXPECT_EQ(s.id, c.id) << c.text;
    if (c.plain) EXPECT_EQ(s.calls, c.calls) << c.text;
    expect_as_tree(c.text, c.text);
  }
}

// Every line of every real transcript (Gemini's and the other clients' records: messages or not),
// and each Gemini .json session's messages as records of their own.
TEST(GeminiRecordProbe, EveryRealRecordReadsAsTheTreeReadsIt) {
  std::size_t records = 0, plain = 0;
  test_data::for_each_transcript_file(CTXFOLD_TRANSCRIPTS_DIR, [&](const std::filesystem::path& path,
                                                                   const std::string& text) {
    if (path.extension() == ".json") {
      Json doc;
      try {
        doc = parse_json(text);
      } catch (const std::exception&) {
        return;
      }
      if (!doc.is_object() || !doc.contains("messages") || !doc["messages"].is_array()) return;
      for (const Json& m : doc["messages"]) {
        const std::string one = dump_json(m);
        expect_as_tree(one, path.string());
        ++records;
        bool valid = false;
        plain += probe_text(one, valid).plain;
      }
      return;
    }
    test_data::for_each_line(text, [&](std::size_t line, std::string_view l) {
      if (l.empty()) return;
      expect_as_tree(l, path.string() + ":" + std::to_string(line));
      ++records;
    });
  });
  EXPECT_GT(records, 1000u);
  EXPECT_GT(plain, 20u);  // the Gemini sessions' messages
}

}  // namespace ctxfold::gemini_probe_test
