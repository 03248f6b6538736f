// The pi importer (docs/formats/pi.md) on session files shaped like the ones pi 0.73.1 wrote in the
// conformance suite (tests/clients/pi/): the entries are written here: a tool turn with two calls,
// a branch left behind with a branch summary, a compaction, shell and extension messages.
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

const std::string kPiSession = "0a1b2c3d-0000-7000-8000-000000000001";

std::string pi_header(const std::string& id = kPiSession, const std::string& parent_file = "") {
  return R"({"type":"session","version":3,"id":")" + id + R"(","timestamp":"2026-12-05T10:00:00.000Z","cwd":"/p")" +
         (parent_file.empty() ? "" : R"(,"parentSession":")" + parent_file + "\"") + "}\n";
}

std::string pi_entry(const std::string& id, const std::string& parent, const std::string& type, const std::string& rest) {
  return R"({"type":")" + type + R"(","id":")" + id + R"(","parentId":)" +
         (parent.empty() ? "null" : "\"" + parent + "\"") + R"(,"timestamp":"2026-12-05T10:00:00.000Z",)" + rest + "}\n";
}

std::string pi_message(const std::string& id, const std::string& parent, const std::string& message) {
  return pi_entry(id, parent, "message", R"("message":)" + message);
}

std::string pi_reply(const std::string& text, int total) {
  return R"({"role":"assistant","content":[{"type":"text","text":")" + text +
         R"("}],"api":"openai-completions","provider":"mock","model":"m","usage":{"input":)" + std::to_string(total - 5) +
         R"(,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":)" + std::to_string(total) + R"(},"stopReason":"stop"})";
}

std::string pi_session_file() {
  std::string s = pi_header();
  s += pi_entry("m0", "", "model_change", R"("provider":"mock","modelId":"m")");
  s += pi_message("u1", "m0", R"({"role":"user","content":[{"type":"text","text":"PROMPT one"}]})");
  s += pi_message("a1", "u1",
                  R"({"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"reasoning_content"},)"
                  R"({"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"echo hi"}},)"
                  R"({"type":"toolCall","id":"call_2","name":"read","arguments":{"path":"missing"}}],)"
                  R"("model":"m","usage":{"input":1000,"output":30,"cacheRead":200,"cacheWrite":10,"totalTokens":1240},"stopReason":"toolUse"})");
  s += pi_message("r1", "a1", R"({"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"hi\n"}],"isError":false})");
  s += pi_message("r2", "r1", R"({"role":"toolResult","toolCallId":"call_2","toolName":"read","content":[{"type":"text","text":"ENOENT"}],"isError":true})");
  s += pi_message("a2", "r2", pi_reply("REPLY one", 1300));
  s += pi_message("u2", "a2", R"({"role":"user","content":"PROMPT plan A"})");
  s += pi_message("a3", "u2", pi_reply("REPLY plan A", 1400));
  s += pi_entry("b1", "a2", "branch_summary", R"("fromId":"a3","summary":"plan A was tried")");
  s += pi_message("x1", "b1", R"({"role":"bashExecution","command":"ls","output":"","exitCode":2,"cancelled":false,"truncated":false})");
  s += pi_message("x2", "x1", R"({"role":"bashExecution","command":"pwd","output":"/p","exitCode":0,"cancelled":false,"truncated":false,"excludeFromContext":true})");
  s += pi_entry("e1", "x2", "custom_message", R"("customType":"ext","content":"EXTENSION note","display":false)");
  s += pi_entry("l1", "e1", "label", R"("targetId":"u1","label":"start")");
  s += pi_message("u3", "l1", R"({"role":"user","content":[{"type":"text","text":"PROMPT plan B"}]})");
  s += pi_message("a4", "u3", pi_reply("REPLY plan B", 1500));
  s += pi_entry("c1", "a4", "compaction",
                R"("summary":"## Goal\nfacts","firstKeptEntryId":"u3","tokensBefore":1500,"details":{"readFiles":[],"modifiedFiles":[]})");
  s += pi_message("u4", "c1", R"({"role":"user","content":[{"type":"text","text":"PROMPT two"}]})");
  s += pi_message("a5", "u4", pi_reply("REPLY two", 900));
  return s;
}

struct PiFixture {
  TempDir dir;
  Store store = open_store(dir.path("p.db"), Store::Mode::read_write);
  ImportResult import(const std::string& path, const std::string& format = "auto") {
    ImportOptions o;
    o.format = format;
    return import_paths(store, {path}, o);
  }
  std::optional<Node> node(const std::string& entry) { return store.node(kPiSession + ":" + entry, false); }
  std::string id(const std::string& entry) { return kPiSession + ":" + entry; }
};

TEST(PiImport, TreeToolsAndCompaction) {
  PiFixture f;
  const std::string path = f.dir.write("2026-12-05T10-00-00-000Z_" + kPiSession + ".jsonl", pi_session_file());
  EXPECT_EQ(detect_format(path), "pi");
  ImportResult r = f.import(path);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0].format, "pi");
  EXPECT_EQ(r.sessions[0].session, kPiSession);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front().code;
  // 15 message nodes (the `!!` shell command is none) and the summary.
  EXPECT_EQ(r.sessions[0].nodes_added, 15);
  auto a1 = f.node("a1");
  ASSERT_TRUE(a1);
  EXPECT_EQ(a1->predecessor.value_or(""), f.id("u1"));
  EXPECT_EQ(f.node("u1")->predecessor, std::nullopt);  // the model_change before it is no node
  ASSERT_EQ(a1->content.size(), 3u);
  EXPECT_EQ(a1->content[0]["type"], "thinking");
  EXPECT_EQ(a1->content[2]["type"], "tool_use");
  EXPECT_EQ(a1->content[2]["input"]["path"], "missing");
  auto r2 = f.node("r2");
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->role, "tool");
  EXPECT_EQ(r2->content[0]["tool_use_id"], "call_2");
  EXPECT_EQ(r2->content[0]["is_error"], true);
  // The branch left behind stays; the branch summary starts the other one, as pi sends it.
  EXPECT_EQ(f.node("u2")->predecessor.value_or(""), f.id("a2"));
  auto b1 = f.node("b1");
  ASSERT_TRUE(b1);
  EXPECT_EQ(b1->predecessor.value_or(""), f.id("a2"));
  EXPECT_EQ(b1->content[0]["text"],
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nplan A was tried</summary>");
  EXPECT_EQ(f.node("x1")->content[0]["text"], "Ran `ls`\n(no output)\n\nCommand exited with code 2");
  EXPECT_FALSE(f.node("x2"));
  EXPECT_EQ(f.node("e1")->predecessor.value_or(""), f.id("x1"));
  EXPECT_EQ(f.node("u3")->predecessor.value_or(""), f.id("e1"));  // through the label entry
  // The compaction covers the path before firstKeptEntryId; the chain goes on from its parent.
  auto c1 = f.node("c1");
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->kind, "summary");
  EXPECT_EQ(f.store.covers_of(c1->seq), (std::vector<std::string>{f.id("u1"), f.id("a1"), f.id("r1"), f.id("r2"),
                                                                    f.id("a2"), f.id("b1"), f.id("x1"), f.id("e1")}));
  EXPECT_EQ(c1->content[0]["text"],
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
            "## Goal\nfacts\n</summary>");
  EXPECT_EQ(f.node("u4")->predecessor.value_or(""), f.id("a4"));
  EXPECT_EQ(f.store.head(kPiSession).value_or(""), f.id("a5"));
  auto cs = session_compactions(f.store, kPiSession);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].origin, "pi");
  ASSERT_TRUE(cs[0].tokens_before);
  EXPECT_EQ(cs[0].tokens_before->value, 1500);
  EXPECT_EQ(cs[0].tokens_before->label, "measured");  // the usage of the reply just before it
  UsageTokens t = normalize_usage("pi", a1->metadata["usage"]);
  EXPECT_EQ(t.input, 1000);
  EXPECT_EQ(t.cache_read, 200);
  EXPECT_EQ(t.cache_write_5m, 10);
  EXPECT_EQ(t.output, 30);
  ImportResult again = f.import(path);
  EXPECT_EQ(again.sessions[0].nodes_added, 0);
}

// Entry ids are unique only inside one file: a fork's copy of the same entries is another session,
// which names its parent (the session id in parentSession's file name).
TEST(PiImport, SameEntryIdsInTwoSessions) {
  PiFixture f;
  const std::string body = pi_message("u1", "", R"({"role":"user","content":"hello"})") + pi_message("a1", "u1", pi_reply("hi", 10));
  ImportResult r1 = f.import(f.dir.write("one.jsonl", pi_header("s-one") + body));
  ImportResult r2 =
      f.import(f.dir.write("two.jsonl", pi_header("s-two", "/h/.pi/agent/sessions/--p--/2026-12-05T10-00-00-000Z_s-one.jsonl") + body));
  EXPECT_EQ(r1.sessions[0].nodes_added, 2);
  EXPECT_EQ(r2.sessions[0].nodes_added, 2);
  EXPECT_EQ(f.store.head("s-two").value_or(""), "s-two:a1");
  auto two = f.store.session("s-two");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->metadata.value("forked_from_id", ""), "s-one");
}

TEST(PiImport, WarnsWithTheLine) {
  PiFixture f;
  // An empty message, an entry type pi never writes (detection refuses it: --format pi), and a
  // compaction that keeps everything.
  const std::string path = f.dir.write(
      "w.jsonl", pi_header() + pi_message("u1", "", R"({"role":"user","content":[]})") +
                     pi_entry("z1", "u1", "mystery", R"("x":1)") +
                     pi_entry("c1", "z1", "compaction", R"("summary":"s","firstKeptEntryId":"u1","tokensBefore":5)"));
  ImportResult r = f.import(path, "pi");
  ASSERT_EQ(r.warnings.size(), 3u);
  EXPECT_EQ(r.warnings[0].code, "node.empty");
  EXPECT_EQ(r.warnings[0].line, 2);
  EXPECT_EQ(r.warnings[1].code, "record.unknown_type");
  EXPECT_EQ(r.warnings[1].line, 3);
  EXPECT_EQ(r.warnings[2].code, "compaction.empty");
  EXPECT_EQ(r.warnings[2].line, 4);
}

}  // namespace
}  // namespace ctxfold
