// The Copilot CLI importer (docs/formats/copilot-cli.md) on an event log shaped like the ones
// Copilot CLI 1.0.102 wrote in the conformance suite (tests/clients/copilot/): the events are
// written here: a prompt with its system message, a usage record, a shell call, a sub-agent with
// its own prompt and tool call, a failing tool, a compaction and a turn after it.
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

std::string ev(const std::string& id, const std::string& type, const std::string& data, const std::string& agent = "") {
  return R"({"type":")" + type + R"(","data":)" + data + R"(,"id":")" + id +
         R"(","timestamp":"2026-12-05T10:00:00Z","parentId":null)" +
         (agent.empty() ? std::string() : R"(,"agentId":")" + agent + "\"") + "}\n";
}

std::string event_log() {
  std::string s;
  s += ev("e0", "session.start",
          R"({"sessionId":"cs-1","copilotVersion":"1.0.102","producer":"copilot-agent","context":{"cwd":"/p"}})");
  s += ev("u1", "user.message", R"({"content":"PROMPT one","transformedContent":"<t>x</t>\n\nPROMPT one"})");
  s += ev("s1", "system.message", R"({"role":"system","content":"You are the CLI."})");
  s += ev("g1", "session.usage_record",
          R"({"usage":{"model":"m","inputTokens":1200,"outputTokens":30,"cacheReadTokens":200,"cacheWriteTokens":0}})");
  s += ev("a1", "assistant.message",
          R"({"model":"m","content":"","reasoningText":"think","toolRequests":[{"toolCallId":"call_1","name":"bash","arguments":{"command":"echo hi"}},)"
          R"({"toolCallId":"call_2","name":"task","arguments":{"prompt":"PROMPT sub"}}]})");
  s += ev("x1", "tool.execution_start", R"({"toolCallId":"call_1","toolName":"bash"})");
  s += ev("r1", "tool.execution_complete", R"({"toolCallId":"call_1","success":true,"result":{"content":"hi"}})");
  s += ev("sa", "subagent.started", R"({"toolCallId":"call_2","agentName":"explore"})", "ag1");
  s += ev("su", "user.message", R"({"content":"PROMPT sub"})", "ag1");
  s += ev("ss", "system.message", R"({"role":"system","content":"You explore."})", "ag1");
  s += ev("sm", "assistant.message",
          R"({"content":"","toolRequests":[{"toolCallId":"call_s","name":"view","arguments":{"path":"/p/a"}}],"parentToolCallId":"call_2"})", "ag1");
  s += ev("sr", "tool.execution_complete",
          R"({"toolCallId":"call_s","success":false,"error":{"message":"no such file","code":"failure"},"parentToolCallId":"call_2"})", "ag1");
  s += ev("sf", "assistant.message", R"({"content":"sub done","toolRequests":[],"parentToolCallId":"call_2"})", "ag1");
  s += ev("r2", "tool.execution_complete", R"({"toolCallId":"call_2","success":true,"result":{"content":"sub done"}})");
  s += ev("a2", "assistant.message", R"({"model":"m","content":"done","toolRequests":[]})");
  s += ev("k0", "session.compaction_start", R"({"trigger":"manual"})");
  s += ev("k1", "session.compaction_complete",
          R"({"success":true,"summaryContent":"S","preCompactionTokens":900,"postCompactionTokens":300,)"
          R"("tokenAccountingBasis":"local_full_context_estimate","trigger":"manual"})");
  s += ev("u2", "user.message", R"({"content":"PROMPT two"})");
  s += ev("a3", "assistant.message", R"({"model":"m","content":"two done","toolRequests":[]})");
  return s;
}

struct CopilotFixture {
  TempDir dir;
  Store store = open_store(dir.path("c.db"), Store::Mode::read_write);
  ImportResult import(const std::string& path) {
    ImportOptions o;
    return import_paths(store, {path}, o);
  }
};

TEST(CopilotImport, NodesUsageAndSystemPrompt) {
  CopilotFixture f;
  const std::string path = f.dir.write("events.jsonl", event_log());
  EXPECT_EQ(detect_format(path), "copilot");
  ImportResult r = f.import(path);
  ASSERT_EQ(r.sessions.size(), 2u);
  EXPECT_EQ(r.sessions[0].session, "cs-1");
  EXPECT_EQ(r.sessions[0].format, "copilot");
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front().code;
  // Main: u1 a1 r1 r2 a2, the summary k1, u2 a3.
  EXPECT_EQ(r.sessions[0].nodes_added, 8);
  auto u1 = f.store.node("u1", false);
  ASSERT_TRUE(u1);
  EXPECT_EQ(u1->content[0]["text"], "<t>x</t>\n\nPROMPT one");  // what the model read
  EXPECT_EQ(u1->metadata["typed"], "PROMPT one");
  EXPECT_EQ(u1->metadata["system_prompt"], "You are the CLI.");  // the system.message after it
  auto a1 = f.store.node("a1", false);
  ASSERT_TRUE(a1);
  EXPECT_EQ(a1->predecessor.value_or(""), "u1");
  ASSERT_EQ(a1->content.size(), 3u);
  EXPECT_EQ(a1->content[0]["type"], "thinking");
  EXPECT_EQ(a1->content[1]["id"], "call_1");
  EXPECT_EQ(a1->content[1]["input"]["command"], "echo hi");
  EXPECT_EQ(a1->metadata["usage"]["inputTokens"], 1200);
  UsageTokens t = normalize_usage("copilot", a1->metadata["usage"]);
  EXPECT_EQ(t.input, 1000);
  EXPECT_EQ(t.cache_read, 200);
  EXPECT_EQ(t.output, 30);
  auto r2 = f.store.node("r2", false);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->predecessor.value_or(""), "r1");  // the sub-agent's events are not on the main chain
}

TEST(CopilotImport, SubAgentIsASidechain) {
  CopilotFixture f;
  ImportResult r = f.import(f.dir.write("events.jsonl", event_log()));
  ASSERT_EQ(r.sessions.size(), 2u);
  EXPECT_EQ(r.sessions[1].session, "cs-1/agent-ag1");
  EXPECT_EQ(r.sessions[1].nodes_added, 4);
  auto info = f.store.session("cs-1/agent-ag1");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, "sidechain");
  EXPECT_EQ(info->parent_session.value_or(""), "cs-1");
  EXPECT_EQ(info->parent_node.value_or(""), "a1");
  auto su = f.store.node("su", false);
  ASSERT_TRUE(su);
  EXPECT_EQ(su->metadata["system_prompt"], "You explore.");
  auto sr = f.store.node("sr", false);
  ASSERT_TRUE(sr);
  EXPECT_EQ(sr->content[0]["is_error"], true);
  EXPECT_EQ(sr->content[0]["content"], "no such file");
  EXPECT_EQ(f.store.head("cs-1/agent-ag1").value_or(""), "sf");
}

TEST(CopilotImport, CompactionIsASummaryView) {
  CopilotFixture f;
  const std::string path = f.dir.write("events.jsonl", event_log());
  f.import(path);
  auto k1 = f.store.node("k1", false);
  ASSERT_TRUE(k1);
  EXPECT_EQ(k1->kind, "summary");
  EXPECT_EQ(f.store.covers_of(k1->seq), (std::vector<std::string>{"u1", "a1", "r1", "r2", "a2"}));
  const std::string text = k1->content[0]["text"];
  EXPECT_NE(text.find("<user_message>\nPROMPT one\n</user_message>"), std::string::npos);
  EXPECT_NE(text.find("<summary>\nS\n</summary>"), std::string::npos);
  EXPECT_EQ(k1->metadata["system_prompt"], "You are the CLI.");
  auto u2 = f.store.node("u2", false);
  ASSERT_TRUE(u2);
  EXPECT_EQ(u2->predecessor.value_or(""), "a2");  // the chain goes on from the last covered node
  EXPECT_EQ(f.store.head("cs-1").value_or(""), "a3");
  auto cs = session_compactions(f.store, "cs-1");
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].origin, "copilot");
  ASSERT_TRUE(cs[0].tokens_before);
  EXPECT_EQ(cs[0].tokens_before->value, 900);
  EXPECT_EQ(cs[0].tokens_before->label, "estimated");
  // Importing again adds nothing.
  ImportResult again = f.import(path);
  EXPECT_EQ(again.sessions[0].nodes_added, 0);
}

// The automatic compaction runs in the background: the turn goes on between its start and its
// end, and what was written meanwhile follows the summary in the context (as in the events Copilot
// CLI 1.0.102 wrote with COPILOT_PROVIDER_MAX_PROMPT_TOKENS=18000, tests/clients/copilot/).
TEST(CopilotImport, BackgroundCompactionCoversWhatItStartedWith) {
  CopilotFixture f;
  std::string s;
  s += ev("e0", "session.start", R"({"sessionId":"cs-2","copilotVersion":"1.0.102"})");
  s += ev("u1", "user.message", R"({"content":"PROMPT one"})");
  s += ev("a1", "assistant.message", R"({"content":"","toolRequests":[{"toolCallId":"c1","name":"bash","arguments":{"command":"cat a"}}]})");
  s += ev("r1", "tool.execution_complete", R"({"toolCallId":"c1","success":true,"result":{"content":"A"}})");
  s += ev("k0", "session.compaction_start", R"({"compactionAttemptId":"att-1","trigger":"threshold"})");
  s += ev("a2", "assistant.message", R"({"content":"","toolRequests":[{"toolCallId":"c2","name":"bash","arguments":{"command":"sleep 2"}}]})");
  s += ev("r2", "tool.execution_complete", R"({"toolCallId":"c2","success":true,"result":{"content":"slept"}})");
  s += ev("k1", "session.compaction_complete",
          R"({"success":true,"outcome":"applied","compactionAttemptId":"att-1","summaryContent":"S","trigger":"threshold"})");
  s += ev("a3", "assistant.message", R"({"content":"done","toolRequests":[]})");
  const std::string path = f.dir.write("events.jsonl", s);
  ImportResult r = f.import(path);
  EXPECT_TRUE(r.warnings.empty());
  auto k1 = f.store.node("k1", false);
  ASSERT_TRUE(k1);
  EXPECT_EQ(f.store.covers_of(k1->seq), (std::vector<std::string>{"u1", "a1", "r1"}));
  EXPECT_EQ(k1->metadata["trigger"], "threshold");
  // a2 and r2, written while it ran, are stored after it: a read as of r2 holds the summary.
  auto a2 = f.store.node("a2", false), r2 = f.store.node("r2", false);
  ASSERT_TRUE(a2 && r2);
  EXPECT_LT(k1->seq, a2->seq);
  EXPECT_EQ(a2->predecessor.value_or(""), "r1");
  EXPECT_EQ(f.store.head("cs-2").value_or(""), "a3");
  EXPECT_EQ(f.import(path).sessions[0].nodes_added, 0);
}

// A compaction cancelled with the process (its end never written): what followed its start is
// stored, and there is no summary.
TEST(CopilotImport, UnfinishedCompactionStoresEverything) {
  CopilotFixture f;
  std::string s;
  s += ev("e0", "session.start", R"({"sessionId":"cs-3"})");
  s += ev("u1", "user.message", R"({"content":"PROMPT one"})");
  s += ev("k0", "session.compaction_start", R"({"compactionAttemptId":"att-1","trigger":"threshold"})");
  s += ev("a1", "assistant.message", R"({"content":"done","toolRequests":[]})");
  ImportResult r = f.import(f.dir.write("events.jsonl", s));
  EXPECT_EQ(r.sessions[0].nodes_added, 2);
  EXPECT_EQ(f.store.head("cs-3").value_or(""), "a1");
}

TEST(CopilotImport, EmptyMessageWarnsWithTheLine) {
  CopilotFixture f;
  const std::string path =
      f.dir.write("events.jsonl", ev("e0", "session.start", R"({"sessionId":"cs-2"})") +
                                      ev("u1", "user.message", R"({"content":"hi"})") +
                                      ev("a1", "assistant.message", R"({"content":"","toolRequests":[]})"));
  ImportResult r = f.import(path);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code, "node.empty");
  EXPECT_EQ(r.warnings[0].line, 3);
}

}  // namespace
}  // namespace ctxfold
