// Write-back (docs/formats/writeback.md): the Claude Code and Codex writers over a synthetic
// session with a rolling summary and tool calls, and the no-overwrite file write.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "session/writeback.hpp"
#include "session_fixture.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

constexpr const char* kId = "0e0e0e0e-1111-4222-8333-444455556666";
constexpr std::int64_t kNow = 1796472625;  // 2026-12-05T12:10:25Z

class WritebackTest : public SessionTest {
 protected:
  /// system prompt, then two turns with a tool call each; with_summary: a rolling summary S over
  /// the first turn.
  void build(bool with_summary) {
    add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", "SYSTEM-PROMPT-TEXT"}}}));
    user("u1", "first request");
    assistant("a1", "running it", {"c1"});
    tool("t1", {"c1"}, "out one");
    assistant("a2", "first done");
    user("u2", "second request");
    assistant("a3", "running again", {"c2"});
    tool("t2", {"c2"}, "out two");
    assistant("a4", "second done");
    if (!with_summary) return;
    Node s;
    s.id = "S";
    s.session = "s";
    s.predecessor = "sys";
    s.kind = kind::kSummary;
    s.role = role::kUser;
    s.content = Json::array({Json{{"type", "text"}, {"text", "SUMMARY of the first turn"}}});
    s.metadata = Json{{"strategy", "rolling"}};
    s.covers_ids = {"u1", "a1", "t1", "a2"};
    ASSERT_EQ(st().append(s), AppendResult::added);
  }

  Writeback write(WritebackClient c) {
    WritebackOptions o;
    o.client = c;
    o.id = kId;
    o.now = kNow;
    o.cwd = "/w/my.proj";
    return build_writeback(st(), "s", o);
  }

  static std::vector<Json> parsed(const Writeback& w) {
    std::vector<Json> out;
    for (const auto& l : w.lines) out.push_back(parse_json(l));
    return out;
  }
};

TEST_F(WritebackTest, ClaudeCodeStartsWithBoundaryAndSummaryThenTheTailChained) {
  build(true);
  Writeback w = write(WritebackClient::claude_code);
  auto recs = parsed(w);
  ASSERT_GE(recs.size(), 5u);
  EXPECT_EQ(w.id, kId);
  EXPECT_EQ(w.relative_path, std::string("projects/-w-my-proj/") + kId + ".jsonl");
  EXPECT_TRUE(w.compacted);
  // the boundary: a root, with the provenance
  EXPECT_EQ(recs[0]["type"], "system");
  EXPECT_EQ(recs[0]["subtype"], "compact_boundary");
  EXPECT_TRUE(recs[0]["parentUuid"].is_null());
  EXPECT_EQ(recs[0]["ctxfold"]["source_session"], "s");
  EXPECT_EQ(recs[0]["ctxfold"]["source_head"], "a4");
  EXPECT_EQ(recs[0]["ctxfold"]["summary"], "S");
  // the summary record right after it
  EXPECT_EQ(recs[1]["type"], "user");
  EXPECT_EQ(recs[1]["isCompactSummary"], true);
  EXPECT_NE(dump_json(recs[1]["message"]).find("SUMMARY of the first turn"), std::string::npos);
  // every record names the new session, chained by parentUuid; the system prompt is not written
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i]["sessionId"], kId);
    EXPECT_EQ(recs[i]["cwd"], "/w/my.proj");
    if (i > 0) {
      EXPECT_EQ(recs[i]["parentUuid"], recs[i - 1]["uuid"]);
    }
    EXPECT_EQ(w.lines[i].find("SYSTEM-PROMPT-TEXT"), std::string::npos);
    if (i != 1) {
      EXPECT_EQ(w.lines[i].find("first request"), std::string::npos)
          << "the covered turn is written only inside the summary record (its recap)";
    }
  }
}

TEST_F(WritebackTest, ClaudeCodeKeepsEachToolResultRightAfterItsCall) {
  build(true);
  auto recs = parsed(write(WritebackClient::claude_code));
  int pairs = 0;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    if (recs[i]["type"] != "assistant") continue;
    EXPECT_EQ(recs[i]["message"]["role"], "assistant");
    EXPECT_NE(recs[i]["message"]["model"], "<synthetic>");
    for (const auto& b : recs[i]["message"]["content"]) {
      if (b["type"] != "tool_use") continue;
      ASSERT_LT(i + 1, recs.size());
      const Json& next = recs[i + 1];
      EXPECT_EQ(next["type"], "user");
      EXPECT_EQ(next["sourceToolAssistantUUID"], recs[i]["uuid"]);
      bool found = false;
      for (const auto& r : next["message"]["content"])
        found = found || (r["type"] == "tool_result" && r["tool_use_id"] == b["id"]);
      EXPECT_TRUE(found) << b["id"];
      ++pairs;
    }
    EXPECT_EQ(recs[i]["message"]["stop_reason"], pairs > 0 && recs[i]["message"]["content"].back()["type"] == "tool_use"
                                                      ? "tool_use"
                                                      : "end_turn");
  }
  EXPECT_EQ(pairs, 1) << "c1 is inside the summary; c2 is in the tail";
}

TEST_F(WritebackTest, ClaudeCodeWithoutSummaryHasNoBoundary) {
  build(false);
  Writeback w = write(WritebackClient::claude_code);
  auto recs = parsed(w);
  EXPECT_FALSE(w.compacted);
  EXPECT_EQ(recs[0]["type"], "user");
  EXPECT_TRUE(recs[0]["parentUuid"].is_null());
  EXPECT_FALSE(recs[0].contains("isCompactSummary"));
  EXPECT_EQ(recs[0]["ctxfold"]["source_head"], "a4");
  EXPECT_TRUE(recs[0]["ctxfold"]["summary"].is_null());
  for (const auto& r : recs) EXPECT_FALSE(r.contains("subtype") && r["subtype"] == "compact_boundary");
}

TEST_F(WritebackTest, TheSameIdGivesTheSameBytesAndAFreshIdIsAUuid) {
  build(true);
  EXPECT_EQ(write(WritebackClient::claude_code).lines, write(WritebackClient::claude_code).lines);
  WritebackOptions o;
  o.now = kNow;
  Writeback a = build_writeback(st(), "s", o), b = build_writeback(st(), "s", o);
  EXPECT_NE(a.id, b.id);
  EXPECT_EQ(a.id.size(), 36u);
  EXPECT_EQ(a.id[14], '4');
  o.client = WritebackClient::codex;
  Writeback c = build_writeback(st(), "s", o);
  EXPECT_EQ(c.id[14], '7');
  EXPECT_EQ(c.id.substr(0, 8), "01a2461c") << "UUID v7 starts with the export's Unix milliseconds";
  o.id = "not-a-uuid";
  try {
    build_writeback(st(), "s", o);
    FAIL() << "a bad --id was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::usage);
  }
}

TEST_F(WritebackTest, CodexWritesSessionMetaThenTheResponsesItems) {
  build(true);
  Writeback w = write(WritebackClient::codex);
  auto recs = parsed(w);
  EXPECT_EQ(w.relative_path,
            std::string("sessions/2026/12/05/rollout-2026-12-05T12-10-25-") + kId + ".jsonl");
  ASSERT_GE(recs.size(), 2u);
  EXPECT_EQ(recs[0]["type"], "session_meta");
  EXPECT_EQ(recs[0]["payload"]["id"], kId);
  EXPECT_EQ(recs[0]["payload"]["cwd"], "/w/my.proj");
  EXPECT_EQ(recs[0]["payload"]["ctxfold"]["source_head"], "a4");
  EXPECT_FALSE(recs[0]["payload"].contains("base_instructions"));
  EXPECT_EQ(recs[1]["type"], "response_item");
  EXPECT_EQ(recs[1]["payload"]["role"], "user");
  EXPECT_NE(dump_json(recs[1]["payload"]).find("SUMMARY of the first turn"), std::string::npos);
  std::vector<std::string> calls, outputs;
  for (std::size_t i = 1; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i]["type"], "response_item");
    EXPECT_EQ(w.lines[i].find("SYSTEM-PROMPT-TEXT"), std::string::npos);
    const Json& p = recs[i]["payload"];
    if (p["type"] == "function_call") calls.push_back(p["call_id"]);
    if (p["type"] == "function_call_output") {
      outputs.push_back(p["call_id"]);
      EXPECT_EQ(recs[i - 1]["payload"]["type"], "function_call") << "the output follows its call";
    }
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"c2"}));
  EXPECT_EQ(outputs, calls);
  EXPECT_EQ(w.messages, static_cast<std::int64_t>(recs.size()) - 1);
}

TEST_F(WritebackTest, AnEmptyRenderIsBadInput) {
  add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", "only a system prompt"}}}));
  try {
    write(WritebackClient::claude_code);
    FAIL() << "nothing to write was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::bad_input);
    EXPECT_EQ(e.code(), "export.empty");
  }
}

TEST_F(WritebackTest, WriteNewFileNeverOverwrites) {
  const std::string path = (dir_ / "home/projects/-w/x.jsonl").string();
  write_new_file(path, {"{\"a\":1}", "{\"b\":2}"});
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), "{\"a\":1}\n{\"b\":2}\n");
  try {
    write_new_file(path, {"{\"c\":3}"});
    FAIL() << "an existing file was overwritten";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::environment);
    EXPECT_EQ(e.code(), "export.exists");
  }
  std::ifstream g(path);
  std::stringstream again;
  again << g.rdbuf();
  EXPECT_EQ(again.str(), ss.str());
}

TEST(WritebackSlug, EveryNonAlphanumericBecomesADash) {
  EXPECT_EQ(claude_project_slug("/home/a/my.app"), "-home-a-my-app");
  EXPECT_EQ(claude_project_slug("/tmp/wb/c1/proj"), "-tmp-wb-c1-proj");
  EXPECT_EQ(claude_project_slug("/w/a_b c"), "-w-a-b-c");
}

}  // namespace
}  // namespace ctxfold
