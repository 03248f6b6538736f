// Hostile input that used to vanish without a word (docs/import.md "Bad input, by class"): a
// line that is not a JSON object, a number beyond a double's range, a key written twice, a field
// of the wrong type and, in ctxfold JSONL, an unknown schema. Each case runs against every
// importer it applies to: the bad record is reported with its file and line, the records around
// it are imported, and what can be kept is kept verbatim as a source record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "import/import.hpp"
#include "session/open.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

using Dir = TempDir;

/// A third line with a field of a type the client never writes there, and what the import
/// says and keeps of it.
struct Mistyped {
  std::string line;
  std::string code;
  int more_nodes;    ///< 1: a node is still made of it
  int more_records;  ///< 1: kept verbatim
};

/// A JSON Lines format: two records, a third holding `extra` (its own last members) and a fourth,
/// each producing a node. `session` is the session the importer names.
struct JsonlFormat {
  std::string name;
  std::string file;
  std::string session;
  std::vector<std::string> before;
  std::function<std::string(const std::string& extra)> third;
  std::string after;
  std::vector<Mistyped> mistyped;
};

std::vector<JsonlFormat> jsonl_formats() {
  return {
      {"claude-code", "cc.jsonl", "cc",
       {R"({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cc","message":{"role":"user","content":"hi"}})",
        R"({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"cc","message":{"role":"assistant","content":[{"type":"text","text":"yo"}]}})"},
       [](const std::string& extra) {
         return R"({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"cc","message":{"role":"user","content":"more"})" +
                extra + "}";
       },
       R"({"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"cc","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}})",
       {{R"({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"cc","message":{"role":"user","content":5}})",
         "record.field_type", 1, 1},
        {R"({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"cc","message":"more"})", "record.field_type", 1, 1},
        {R"({"type":"user","uuid":7,"parentUuid":"a1","sessionId":"cc","message":{"role":"user","content":"x"}})",
         "record.field_type", 0, 1}}},
      {"codex", "rollout.jsonl", "s-codex",
       {R"({"timestamp":"t0","type":"session_meta","payload":{"id":"s-codex"}})",
        R"({"timestamp":"t1","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}})"},
       [](const std::string& extra) {
         return R"({"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yo"}]})" +
                extra + "}";
       },
       R"({"timestamp":"t3","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ok"}]}})",
       {{R"({"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"assistant","content":5}})",
         "record.field_type", 1, 1}}},
      {"gemini", "session-g.jsonl", "session-g",
       {R"({"sessionId":"5e55a1b2-0000-4000-8000-000000000001","projectHash":"ab12","startTime":"2026-12-01T09:00:00.000Z","lastUpdated":"2026-12-01T09:00:00.000Z","kind":"main"})",
        R"({"id":"m1","timestamp":"t","type":"user","content":[{"text":"hi"}]})"},
       [](const std::string& extra) {
         return R"({"id":"m2","timestamp":"t","type":"gemini","content":"yo","thoughts":[],"model":"gemini-2.5-flash")" + extra +
                "}";
       },
       R"({"id":"m3","timestamp":"t","type":"user","content":[{"text":"ok"}]})",
       {{R"({"id":"m2","timestamp":"t","type":"gemini","content":5})", "record.field_type", 1, 1},
        {R"({"id":"m2","timestamp":"t","type":"gemini","content":"yo","toolCalls":"x"})", "record.field_type", 1, 1}}},
      {"ctxfold", "export.jsonl", "cx",
       {R"({"schema":"ctxfold.session/1","id":"cx"})",
        R"({"id":"n1","session":"cx","kind":"message","role":"user","content":[{"type":"text","text":"hi"}]})"},
       [](const std::string& extra) {
         return R"({"id":"n2","session":"cx","kind":"message","role":"assistant","content":[{"type":"text","text":"yo"}])" +
                extra + "}";
       },
       R"({"id":"n3","session":"cx","kind":"message","role":"user","content":[{"type":"text","text":"ok"}]})",
       {{R"({"id":"n2","session":"cx","kind":"message","role":"assistant","content":5})", "input.node", 0, 1},
        {R"({"id":"n2","session":"cx","kind":"message","role":7,"content":[]})", "input.node", 0, 1}}},
  };
}

struct Outcome {
  ImportResult result;
  std::int64_t nodes = 0;
  std::int64_t records = 0;
};

Outcome import_file(const Dir& dir, const std::string& db, const std::string& path, const std::string& session) {
  Store store = open_store(dir.path(db), Store::Mode::read_write);
  Outcome o;
  o.result = import_paths(store, {path}, ImportOptions{});
  store.for_each_node(session, [&](const Node&) {
    ++o.nodes;
    return true;
  });
  o.records = store.source_record_count(session);
  return o;
}

/// The warnings of code `code` at `line` of file `file`.
int warned(const ImportResult& r, const std::string& file, std::int64_t line, const std::string& code) {
  int n = 0;
  for (const auto& w : r.warnings) n += w.file == file && w.line == line && w.code == code;
  return n;
}

std::string all_warnings(const ImportResult& r) {
  std::string s;
  for (const auto& w : r.warnings) s += w.file + ":" + std::to_string(w.line) + " " + w.code + " " + w.message + "\n";
  return s;
}

/// One bad third line: what it is, and what the import must say and keep.
struct LineCase {
  std::string what;
  std::string code;
  std::function<std::string(const JsonlFormat&)> line;
  int more_nodes;    ///< nodes beyond the file without the third line (1: the record is still read)
  int more_records;  ///< source records beyond it (1: kept verbatim)
};

std::vector<LineCase> line_cases() {
  return {
      {"an array, not an object", "record.not_object", [](const JsonlFormat&) { return std::string("[1,2,3]"); }, 0, 1},
      {"a string, not an object", "record.not_object", [](const JsonlFormat&) { return std::string("\"text\""); }, 0, 1},
      {"a number beyond a double", "json.number_range",
       [](const JsonlFormat& f) { return f.third(R"(,"n":1e999)"); }, 1, 0},
      {"a key written twice", "json.duplicate_key",
       [](const JsonlFormat& f) { return f.third(R"(,"dup":1,"dup":2)"); }, 1, 1},
  };
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(ImportInput, EveryJsonlImporterReportsEachBadLineWithFileAndLine) {
  for (const JsonlFormat& f : jsonl_formats()) {
    Dir dir;
    std::vector<std::string> base = f.before;
    base.push_back(f.after);
    Outcome without = import_file(dir, "base.db", dir.write(f.file, joined(base)), f.session);
    ASSERT_GE(without.nodes, 2) << f.name << "\n" << all_warnings(without.result);
    ASSERT_TRUE(without.result.warnings.empty()) << f.name << "\n" << all_warnings(without.result);
    for (const LineCase& c : line_cases()) {
      std::vector<std::string> lines = f.before;
      lines.push_back(c.line(f));
      lines.push_back(f.after);
      Dir cdir;
      const std::string path = cdir.write(f.file, joined(lines));
      Outcome o = import_file(cdir, "c.db", path, f.session);
      const std::string ctx = f.name + ": " + c.what + "\n" + all_warnings(o.result);
      EXPECT_EQ(warned(o.result, path, 3, c.code), 1) << ctx;
      EXPECT_EQ(o.nodes, without.nodes + c.more_nodes) << ctx;
      EXPECT_EQ(o.records, without.records + c.more_records) << ctx;
    }
    for (const Mistyped& m : f.mistyped) {
      Dir cdir;
      const std::string path = cdir.write(f.file, joined({f.before[0], f.before[1], m.line, f.after}));
      Outcome o = import_file(cdir, "c.db", path, f.session);
      const std::string ctx = f.name + ": " + m.line + "\n" + all_warnings(o.result);
      EXPECT_EQ(warned(o.result, path, 3, m.code), 1) << ctx;
      EXPECT_EQ(o.nodes, without.nodes + m.more_nodes) << ctx;
      EXPECT_EQ(o.records, without.records + m.more_records) << ctx;
    }
  }
}

TEST(ImportInput, CtxfoldUnknownSchemaIsReportedAndKept) {
  Dir dir;
  const std::string path = dir.write(
      "cx.jsonl", joined({R"({"schema":"ctxfold.session/1","id":"cx"})",
                          R"({"id":"n1","session":"cx","kind":"message","role":"user","content":[{"type":"text","text":"hi"}]})",
                          R"({"schema":"ctxfold.node/9","id":"n2","session":"cx","kind":"message","role":"user","content":[]})",
                          R"({"schema":"ctxfold.session/7","id":"other"})"}));
  Outcome o = import_file(dir, "t.db", path, "cx");
  EXPECT_EQ(warned(o.result, path, 3, "record.unknown_schema"), 1) << all_warnings(o.result);
  EXPECT_EQ(warned(o.result, path, 4, "record.unknown_schema"), 1) << all_warnings(o.result);
  EXPECT_EQ(o.nodes, 1);
  EXPECT_EQ(o.records, 2);
}

/// A whole-document format: `doc(extra)` is a document on several lines whose item at line 4
/// ends with `extra`.
struct DocFormat {
  std::string name;
  std::string file;
  std::string session;
  std::function<std::string(const std::string& extra)> doc;
};

std::vector<DocFormat> doc_formats() {
  return {
      {"openai", "chat.json", "chat",
       [](const std::string& x) {
         return "{\n\"messages\":[\n{\"role\":\"user\",\"content\":\"hi\"},\n{\"role\":\"assistant\",\"content\":\"yo\"" + x +
                "}\n]}\n";
       }},
      {"anthropic", "msgs.json", "msgs",
       [](const std::string& x) {
         return "{\n\"messages\":[\n{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},\n"
                "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"x\",\"input\":{}}]" +
                x + "}\n]}\n";
       }},
      {"gemini", "session-d.json", "session-d",
       [](const std::string& x) {
         return "{\n\"sessionId\":\"s\",\"projectHash\":\"p\",\"messages\":[\n"
                "{\"id\":\"m1\",\"timestamp\":\"t\",\"type\":\"user\",\"content\":[{\"text\":\"hi\"}]},\n"
                "{\"id\":\"m2\",\"timestamp\":\"t\",\"type\":\"gemini\",\"content\":\"yo\"" +
                x + "}\n]}\n";
       }},
  };
}

TEST(ImportInput, EveryDocumentImporterReportsHugeNumbersAndDuplicateKeys) {
  for (const DocFormat& f : doc_formats()) {
    Dir dir;
    Outcome base = import_file(dir, "base.db", dir.write(f.file, f.doc("")), f.session);
    ASSERT_EQ(base.nodes, 2) << f.name << "\n" << all_warnings(base.result);
    ASSERT_TRUE(base.result.warnings.empty()) << f.name << "\n" << all_warnings(base.result);

    Dir d1;
    const std::string huge = d1.write(f.file, f.doc(R"(,"n":1e999)"));
    Outcome h = import_file(d1, "t.db", huge, f.session);
    EXPECT_EQ(warned(h.result, huge, 4, "json.number_range"), 1) << f.name << "\n" << all_warnings(h.result);
    EXPECT_EQ(h.nodes, 2) << f.name << "\n" << all_warnings(h.result);

    Dir d2;
    const std::string dup = d2.write(f.file, f.doc(R"(,"dup":1,"dup":2)"));
    Outcome d = import_file(d2, "t.db", dup, f.session);
    EXPECT_EQ(warned(d.result, dup, 4, "json.duplicate_key"), 1) << f.name << "\n" << all_warnings(d.result);
    EXPECT_EQ(d.nodes, 2) << f.name << "\n" << all_warnings(d.result);
    EXPECT_EQ(d.records, base.records + 1) << f.name << ": the document kept verbatim";
  }
}

}  // namespace
}  // namespace ctxfold
