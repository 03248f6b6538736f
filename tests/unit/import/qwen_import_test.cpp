// The Qwen Code importer (docs/formats/qwen-code.md) on a recording shaped like the ones Qwen Code
// 0.24.4 wrote in the conformance suite (tests/clients/qwen/): the records are written here, a
// prompt, a shell call with telemetry records between the turns, a parallel pair of calls, a chat
// compression and a turn after it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "forensics/compactions.hpp"
#include "forensics/usage.hpp"
#include "import/import.hpp"
#include "session/open.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace ctxfold {
namespace {

std::string rec(const std::string& uuid, const std::string& parent, const std::string& type, const std::string& rest) {
  return R"({"uuid":")" + uuid + R"(","parentUuid":)" + (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"sessionId":"sess-1","timestamp":"2026-12-05T10:00:00Z","type":")" + type +
         R"(","provenance":"x","cwd":"/p","version":"0.24.4",)" + rest + "}\n";
}

std::string recording() {
  std::string s;
  s += rec("u1", "", "user", R"("message":{"role":"user","parts":[{"text":"PROMPT one"}]})");
  s += rec("t1", "u1", "system", R"("subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"x"}})");
  s += rec("a1", "t1", "assistant",
           R"("model":"m","message":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"run_shell_command","args":{"command":"echo hi"}}}]},)"
           R"("usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":30,"thoughtsTokenCount":0,"totalTokenCount":1230,"cachedContentTokenCount":200})");
  s += rec("r1", "a1", "tool_result",
           R"("message":{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"run_shell_command","response":{"output":"hi"}}}]},"toolCallResult":{"status":"success"})");
  s += rec("a2", "r1", "assistant",
           R"("model":"m","message":{"role":"model","parts":[{"functionCall":{"id":"call_2","name":"read_file","args":{"file_path":"/p/a"}}},{"functionCall":{"id":"call_3","name":"read_file","args":{"file_path":"/p/missing"}}}]})");
  s += rec("r2", "a2", "tool_result",
           R"("message":{"role":"user","parts":[{"functionResponse":{"id":"call_2","name":"read_file","response":{"output":"alpha"}}}]})");
  s += rec("r3", "r2", "tool_result",
           R"("message":{"role":"user","parts":[{"functionResponse":{"id":"call_3","name":"read_file","response":{"error":"no such file"}}}]})");
  s += rec("a3", "r3", "assistant", R"("model":"m","message":{"role":"model","parts":[{"text":"done"}]})");
  s += rec("c1", "a3", "system",
           R"("subtype":"chat_compression","systemPayload":{"info":{"originalTokenCount":900,"newTokenCount":300,)"
           R"("newTokenCountIsEstimated":true,"originalTokenCountIsEstimated":false,"triggerReason":"manual"},)"
           R"("compressedHistory":[{"role":"user","parts":[{"text":"<state_snapshot>s</state_snapshot>"}]},)"
           R"({"role":"model","parts":[{"text":"Got it."}]}]})");
  s += rec("u2", "c1", "user", R"("message":{"role":"user","parts":[{"text":"PROMPT two"}]})");
  s += rec("a4", "u2", "assistant", R"("model":"m","message":{"role":"model","parts":[{"text":"two done"}]})");
  return s;
}

struct QwenFixture {
  TempDir dir;
  Store store = open_store(dir.path("q.db"), Store::Mode::read_write);
  ImportResult import(const std::string& path) {
    ImportOptions o;
    return import_paths(store, {path}, o);
  }
};

TEST(QwenImport, NodesChainAndCompression) {
  QwenFixture f;
  const std::string path = f.dir.write("sess-1.jsonl", recording());
  EXPECT_EQ(detect_format(path), "qwen");
  ImportResult r = f.import(path);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0].format, "qwen");
  EXPECT_EQ(r.sessions[0].session, "sess-1");
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front().code;
  // 9 message nodes and one summary; the 2 telemetry records and the compression are source records.
  EXPECT_EQ(r.sessions[0].nodes_added, 10);
  auto a1 = f.store.node("a1", false);
  ASSERT_TRUE(a1);
  EXPECT_EQ(a1->predecessor.value_or(""), "u1");  // through the telemetry record
  EXPECT_EQ(a1->content[0]["type"], "tool_use");
  EXPECT_EQ(a1->content[0]["id"], "call_1");
  EXPECT_EQ(a1->metadata["usage"]["promptTokenCount"], 1200);
  auto r3 = f.store.node("r3", false);
  ASSERT_TRUE(r3);
  EXPECT_EQ(r3->role, "tool");
  EXPECT_EQ(r3->content[0]["is_error"], true);
  EXPECT_EQ(r3->content[0]["content"], "no such file");
  // The compression: a summary covering the whole chain before it, split by replacement_history.
  auto c1 = f.store.node("c1", false);
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->kind, "summary");
  EXPECT_EQ(f.store.covers_of(c1->seq),
            (std::vector<std::string>{"u1", "a1", "r1", "a2", "r2", "r3", "a3"}));
  EXPECT_EQ(c1->metadata["replacement_history"].size(), 2u);
  EXPECT_EQ(c1->metadata["replacement_history"][1]["role"], "assistant");
  auto u2 = f.store.node("u2", false);
  ASSERT_TRUE(u2);
  EXPECT_EQ(u2->predecessor.value_or(""), "a3");  // the chain goes on from the last covered node
  EXPECT_EQ(f.store.head("sess-1").value_or(""), "a4");
  // compactions and usage read the client's own figures.
  auto cs = session_compactions(f.store, "sess-1");
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].origin, "qwen");
  ASSERT_TRUE(cs[0].tokens_before);
  EXPECT_EQ(cs[0].tokens_before->value, 900);
  EXPECT_EQ(cs[0].tokens_before->label, "measured");
  EXPECT_EQ(cs[0].tokens_after->label, "estimated");
  UsageTokens t = normalize_usage("qwen", a1->metadata["usage"]);
  EXPECT_EQ(t.input, 1000);
  EXPECT_EQ(t.cache_read, 200);
  EXPECT_EQ(t.output, 30);
  // Importing again adds nothing.
  ImportResult again = f.import(path);
  EXPECT_EQ(again.sessions[0].nodes_added, 0);
}

TEST(QwenImport, EmptyPartsWarnWithTheLine) {
  QwenFixture f;
  const std::string path = f.dir.write(
      "e.jsonl", rec("u1", "", "user", R"("message":{"role":"user","parts":[{"text":"hi"}]})") +
                     rec("a1", "u1", "assistant", R"("message":{"role":"model","parts":[]})"));
  ImportResult r = f.import(path);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code, "node.empty");
  EXPECT_EQ(r.warnings[0].line, 2);
}

}  // namespace
}  // namespace ctxfold
