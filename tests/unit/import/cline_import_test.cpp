// The Cline importer (docs/formats/cline.md) on session files shaped like the ones Cline CLI
// 3.0.65 wrote in the conformance suite (tests/clients/cline/): written here, a lead session with
// its session file, structured tool results, a failing read, and a sub-agent's messages file.
#include <gtest/gtest.h>

#include <string>

#include "forensics/usage.hpp"
#include "import/import.hpp"
#include "render/render.hpp"
#include "session/open.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace ctxfold {
namespace {

const char* kLead = R"({"version":1,"updated_at":"2026-12-05T18:52:14.047Z","agent":"lead","sessionId":"17_ab",
"origin":{"source":"cli","mode":"user","sessionId":"17_ab","version":"3.0.65"},
"messages":[
{"id":"u1","role":"user","content":[{"type":"text","text":"<user_input mode=\"act\">PROMPT one</user_input>"}],"ts":1796496731790},
{"id":"a1","role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"read_files","input":{"files":[{"path":"/p/a"},{"path":"/p/missing"}]}}],
 "ts":1796496732833,"modelInfo":{"id":"mock-model","provider":"openai-compatible"},"metrics":{"inputTokens":1200,"outputTokens":30,"cacheReadTokens":200,"cacheWriteTokens":0}},
{"id":"r1","role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","name":"read_files","content":[{"query":"/p/a","result":"1 | alpha","success":true},{"query":"/p/missing","result":"","error":"ENOENT","success":false}]}],"ts":1796496733003},
{"id":"a2","role":"assistant","content":[{"type":"tool_use","id":"call_2","name":"spawn_agent","input":{"systemPrompt":"You read.","task":"PROMPT sub"}}],"ts":1796496733187},
{"id":"r2","role":"user","content":[{"type":"tool_result","tool_use_id":"call_2","name":"spawn_agent","content":"{\"text\":\"sub done\"}"}],"ts":1796496733275},
{"id":"a3","role":"assistant","content":[{"type":"text","text":"done"}],"ts":1796496733952}],
"system_prompt":"You are Cline."})";

const char* kSession = R"({"version":1,"session_id":"17_ab","provider":"openai-compatible","model":"mock-model","cwd":"/p",
"started_at":"2026-12-05T18:50:53.691Z","status":"completed","metadata":{"title":"PROMPT one","aggregateUsage":{"inputTokens":2528}}})";

const char* kAgent = R"({"version":1,"agent":"subagent","sessionId":"17_ab__agent_9","taskType":"subagent_task",
"origin":{"source":"cli","mode":"subagent","sessionId":"17_ab__agent_9","parentThreadId":"17_ab","subagent":"agent_9"},
"messages":[{"id":"s1","role":"user","content":[{"type":"text","text":"PROMPT sub"}],"ts":1796496902384},
{"id":"s2","role":"assistant","content":[{"type":"text","text":"sub done"}],"ts":1796496902764}]})";

struct ClineFixture {
  TempDir dir;
  Store store = open_store(dir.path("c.db"), Store::Mode::read_write);
  ImportResult import(const std::string& path) {
    ImportOptions o;
    return import_paths(store, {path}, o);
  }
};

TEST(ClineImport, DetectedAndReadWithItsSessionFile) {
  ClineFixture f;
  const std::string path = f.dir.write("17_ab.messages.json", kLead);
  f.dir.write("17_ab.json", kSession);
  EXPECT_EQ(detect_format(path), "cline");
  ImportResult r = f.import(path);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0].session, "17_ab");
  EXPECT_EQ(r.sessions[0].format, "cline");
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front().code;
  EXPECT_EQ(r.sessions[0].nodes_added, 6);
  auto info = f.store.session("17_ab");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata["system_prompt"], "You are Cline.");
  EXPECT_EQ(info->metadata["model"], "mock-model");
  EXPECT_EQ(info->metadata["cwd"], "/p");
  EXPECT_EQ(info->metadata["title"], "PROMPT one");
  auto u1 = f.store.node("u1", false);
  ASSERT_TRUE(u1);
  EXPECT_EQ(u1->content[0]["text"], "PROMPT one");  // the prompt as the model reads it
  EXPECT_EQ(u1->metadata["timestamp"], "2026-12-05T18:52:11.790Z");
  auto a1 = f.store.node("a1", false);
  ASSERT_TRUE(a1);
  EXPECT_EQ(a1->metadata["model"], "mock-model");
  UsageTokens t = normalize_usage("cline", a1->metadata["usage"]);
  EXPECT_EQ(t.input, 1000);
  EXPECT_EQ(t.cache_read, 200);
  EXPECT_EQ(t.output, 30);
}

TEST(ClineImport, StructuredToolResultsAreTheirJsonText) {
  ClineFixture f;
  f.import(f.dir.write("17_ab.messages.json", kLead));
  auto r1 = f.store.node("r1", false);
  ASSERT_TRUE(r1);
  EXPECT_EQ(r1->role, "tool");
  EXPECT_EQ(r1->content[0]["content"],
            R"([{"query":"/p/a","result":"1 | alpha","success":true},{"query":"/p/missing","result":"","error":"ENOENT","success":false}])");
  auto r2 = f.store.node("r2", false);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->content[0]["content"], R"({"text":"sub done"})");
}

TEST(ClineImport, SubAgentIsASidechainOfTheLead) {
  ClineFixture f;
  f.import(f.dir.write("17_ab.messages.json", kLead));
  ImportResult r = f.import(f.dir.write("agent_9.messages.json", kAgent));
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_TRUE(r.warnings.empty());
  auto info = f.store.session("17_ab__agent_9");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, "sidechain");
  EXPECT_EQ(info->parent_session.value_or(""), "17_ab");
  // Launched by the spawn_agent call with its task, whose systemPrompt is its system prompt.
  EXPECT_EQ(info->parent_node.value_or(""), "a2");
  EXPECT_EQ(info->metadata["system_prompt"], "You read.");
  // Importing again adds nothing.
  ImportResult again = f.import(f.dir.path("agent_9.messages.json"));
  EXPECT_EQ(again.sessions[0].nodes_added, 0);
}

TEST(ClineImport, EmptyMessageWarnsWithTheLine) {
  ClineFixture f;
  ImportResult r = f.import(f.dir.write("17_x.messages.json",
                                        "{\"agent\":\"lead\",\"sessionId\":\"17_x\",\"messages\":[\n"
                                        "{\"id\":\"u1\",\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},\n"
                                        "{\"id\":\"a1\",\"role\":\"assistant\",\"content\":[]}]}"));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code, "node.empty");
  EXPECT_EQ(r.warnings[0].line, 3);
}

// A compaction state beside kLead as Cline CLI 3.0.65 writes it after its agentic compaction
// (docs/formats/cline.md "Compaction"): the summary message, then verbatim copies of a2 and r2;
// source_message_count 5 (u1 to r2), so a3 came after the compaction.
std::string compaction_state(const std::string& last_key) {
  return R"({"version":1,"updated_at":"2026-12-05T21:40:05.840Z","conversation_id":"17_ab","source_message_count":5,
"source_prefix_hash":"sha256:00","source_last_message_key":")" + last_key + R"(","messages":[
{"role":"user","content":[{"type":"text","text":"Context summary:\n\nread a, spawned a helper"}],
 "metadata":{"kind":"compaction_summary","displayRole":"system","userRunSpan":1,"summary":"read a, spawned a helper","tokensBefore":27243,"generatedAt":1796506805789}},
{"id":"a2","role":"assistant","content":[{"type":"tool_use","id":"call_2","name":"spawn_agent","input":{"systemPrompt":"You read.","task":"PROMPT sub"}}],"ts":1796496733187},
{"id":"r2","role":"user","content":[{"type":"tool_result","tool_use_id":"call_2","name":"spawn_agent","content":"{\"text\":\"sub done\"}"}],"ts":1796496733275}]})";
}

TEST(ClineImport, CompactionStateIsASummaryOfWhatItReplaced) {
  ClineFixture f;
  const std::string path = f.dir.write("17_ab.messages.json", kLead);
  f.dir.write("17_ab.compaction.json", compaction_state("id:r2"));
  ImportResult r = f.import(path);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front().code;
  EXPECT_EQ(r.sessions[0].nodes_added, 7);
  auto s = f.store.node("17_ab:compaction:2026-12-05T21:40:05.840Z", false);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "summary");
  EXPECT_FALSE(s->predecessor);  // the splice point: before u1
  // It replaced u1, a1 and r1; the copies of a2 and r2 after it are those nodes, raw.
  EXPECT_EQ(f.store.covers_of(s->seq), (std::vector<std::string>{"u1", "a1", "r1"}));
  EXPECT_EQ(s->content.size(), 1u);
  EXPECT_EQ(s->content[0]["text"], "Context summary:\n\nread a, spawned a helper");
  EXPECT_EQ(s->metadata["origin"], "import");
  EXPECT_EQ(s->metadata["compact_metadata"]["tokensBefore"], 27243);
  // Stored before the copies it precedes in the context (a read as of r1 already holds it).
  auto r1 = f.store.node("r1", false), a2 = f.store.node("a2", false);
  ASSERT_TRUE(r1 && a2);
  EXPECT_GT(s->seq, r1->seq);
  EXPECT_LT(s->seq, a2->seq);
  // The context the client sends next: system, the summary, a2, r2, a3.
  RenderOptions o;
  Json body = render_request_body(render_context(f.store, "17_ab", o), RenderFormat::openai);
  ASSERT_EQ(body["messages"].size(), 5u);
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][1]["content"], "Context summary:\n\nread a, spawned a helper");
  EXPECT_EQ(body["messages"][2]["tool_calls"][0]["id"], "call_2");
  EXPECT_EQ(body["messages"][4]["content"], "done");
  // Read again: nothing twice.
  EXPECT_EQ(f.import(path).sessions[0].nodes_added, 0);
}

TEST(ClineImport, CompactionStateOfAnotherTranscriptIsAWarning) {
  ClineFixture f;
  const std::string path = f.dir.write("17_ab.messages.json", kLead);
  f.dir.write("17_ab.compaction.json", compaction_state("id:other"));
  ImportResult r = f.import(path);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code, "compaction.unused");
  EXPECT_EQ(r.sessions[0].nodes_added, 6);  // the messages, no summary
}

}  // namespace
}  // namespace ctxfold
