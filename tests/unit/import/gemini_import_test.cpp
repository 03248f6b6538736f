// Gemini CLI 0.61 chat recordings (JSON Lines): resumes and compressions rewrite the whole list
// with $set.messages; import keeps every turn (docs/formats/gemini.md). Every fixture is written
// here, in the shape observed from the real client (tests/clients/gemini), with made-up content.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "import/import.hpp"
#include "invariants/verify.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

const std::string kHeader =
    R"({"sessionId":"5e55a1b2-0000-4000-8000-000000000001","projectHash":"ab12","startTime":"2026-12-01T09:00:00.000Z","lastUpdated":"2026-12-01T09:00:00.000Z","kind":"main"})";
const std::string kContext = R"({"id":"ctx0","timestamp":"t","type":"user","content":[{"text":"<session_context>\nenv\n</session_context>"}]})";

std::string user(const std::string& id, const std::string& text) {
  return R"({"id":")" + id + R"(","timestamp":"t","type":"user","content":[{"text":")" + text + R"("}]})";
}
std::string reply(const std::string& id, const std::string& text) {
  return R"({"id":")" + id + R"(","timestamp":"t","type":"gemini","content":")" + text +
         R"(","thoughts":[],"model":"gemini-2.5-flash"})";
}
/// A tool-calling turn as the live recording writes it: content "" plus toolCalls[].
std::string call(const std::string& id, const std::string& call_id) {
  return R"({"id":")" + id + R"(","timestamp":"t","type":"gemini","content":"","thoughts":[],"model":"gemini-2.5-flash","toolCalls":[{"id":")" +
         call_id + R"(","name":"read_file","args":{"file_path":"a.txt"},"result":[{"functionResponse":{"id":")" + call_id +
         R"(","name":"read_file","response":{"output":"alpha"}}}],"status":"success"}]})";
}
/// The same turn as a $set.messages rewrite writes it: content = the API parts.
std::string call_parts(const std::string& id, const std::string& call_id) {
  return R"({"id":")" + id + R"(","timestamp":"t","type":"gemini","content":[{"functionCall":{"id":")" + call_id +
         R"(","name":"read_file","args":{"file_path":"a.txt"}}}],"thoughts":[],"model":"gemini-2.5-flash","toolCalls":[{"id":")" +
         call_id + R"(","name":"read_file","args":{"file_path":"a.txt"},"status":"success"}]})";
}
std::string response(const std::string& id, const std::string& call_id) {
  return R"({"id":")" + id + R"(","timestamp":"t","type":"user","content":[{"functionResponse":{"id":")" + call_id +
         R"(","name":"read_file","response":{"output":"alpha"}}}]})";
}
std::string set_messages(const std::vector<std::string>& msgs) {
  std::string s = R"({"$set":{"messages":[)";
  for (std::size_t i = 0; i < msgs.size(); ++i) s += (i ? "," : "") + msgs[i];
  return s + R"(],"lastUpdated":"t2"}})";
}
std::string lines(const std::vector<std::string>& ls) {
  std::string s;
  for (const auto& l : ls) s += l + "\n";
  return s;
}

class GeminiImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-gemini-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_.emplace(open_store((dir_ / "t.db").string(), Store::Mode::read_write));
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  ImportResult import(const std::string& content, const std::string& name = "session-2026-12-01T09-00-5e55a1b2.jsonl") {
    path_ = (dir_ / name).string();
    std::ofstream(path_, std::ios::binary) << content;
    ImportOptions o;
    return import_paths(*store_, {path_}, o);
  }
  std::string session() const { return "session-2026-12-01T09-00-5e55a1b2"; }
  std::vector<Node> nodes() {
    std::vector<Node> out;
    store_->for_each_node(session(), [&](const Node& n) {
      out.push_back(n);
      return true;
    });
    return out;
  }
  std::vector<std::string> spine_ids() {
    std::vector<std::string> out;
    auto id = store_->head(session());
    while (id) {
      out.push_back(*id);
      id = store_->node(*id)->predecessor;
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  Json gemini_body(std::optional<std::string> head = std::nullopt) {
    RenderOptions o;
    o.head = head;
    return render_request_body(render_context(*store_, session(), o), RenderFormat::gemini);
  }
  int count(const ImportResult& r, const std::string& code) {
    return static_cast<int>(std::count_if(r.warnings.begin(), r.warnings.end(),
                                          [&](const ImportWarning& w) { return w.code == code; }));
  }
  static std::string warnings(const ImportResult& r) {
    std::string s;
    for (const auto& w : r.warnings) s += w.file + ":" + std::to_string(w.line) + " " + w.code + " " + w.message + "\n";
    return s;
  }

  fs::path dir_;
  std::string path_;
  std::optional<Store> store_;
};

// A resume writes the header again, the fresh process's one-message list, then the whole history
// with tool-calling turns in Part form: nothing is added twice and the chain stays one line.
TEST_F(GeminiImport, ResumeRewriteOfUnchangedTurnsAddsNothing) {
  const std::string file = lines({kHeader, set_messages({kContext}), user("u1", "PROMPT one"), call("m1", "read_file__c1"),
                                  response("r1", "read_file__c1"), reply("m2", "REPLY one")});
  const std::string whole = file + lines({kHeader, set_messages({kContext}),
                                        set_messages({kContext, user("u1", "PROMPT one"), call_parts("m1", "read_file__c1"),
                                                      response("r1", "read_file__c1"), reply("m2", "REPLY one")}),
                                        user("u2", "PROMPT two"), reply("m3", "REPLY two")});
  ImportResult r = import(whole);
  EXPECT_TRUE(r.warnings.empty()) << warnings(r);
  std::vector<Node> all = nodes();
  ASSERT_EQ(all.size(), 7u);  // ctx0 u1 m1 r1 m2 u2 m3: no ":results" node, no copies
  EXPECT_EQ(spine_ids(), (std::vector<std::string>{"ctx0", "u1", "m1", "r1", "m2", "u2", "m3"}));
  EXPECT_EQ(all[2].content.size(), 1u);
  EXPECT_EQ(all[2].content[0]["type"], "tool_use");
  EXPECT_EQ(all[3].role, "tool");
  EXPECT_EQ(all[3].content[0]["type"], "tool_result");
  EXPECT_EQ(all[3].content[0]["tool_use_id"], "read_file__c1");
  auto info = store_->session(session());
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata["startTime"], "2026-12-01T09:00:00.000Z");
  EXPECT_EQ(info->metadata["resumes"].size(), 1u);
  // Importing again adds nothing.
  ImportResult again = import(whole);
  for (const auto& s : again.sessions) EXPECT_EQ(s.nodes_added, 0);
}

// The file grows between two imports and the client's resume rewrote it onto a branch: HEAD
// follows the client (the new tip descends from a rewrite, not from the old HEAD).
TEST_F(GeminiImport, ReimportAfterAResumeMovesHeadToTheClientsTip) {
  const std::string first = lines({kHeader, set_messages({kContext}), user("u1", "PROMPT one"), call("m1", "read_file__c1"),
                                   response("r1", "read_file__c1"), reply("m2", "REPLY one")});
  import(first);
  EXPECT_EQ(store_->head(session()), std::optional<std::string>("m2"));
  ImportResult r = import(first + lines({kHeader, set_messages({kContext, user("u1", "PROMPT one"), call_parts("m1", "read_file__c1"),
                                                                response("m1_response", "read_file__c1"),
                                                                response("r1", "read_file__c1"), reply("m2", "REPLY one")}),
                                         user("u2", "PROMPT two"), reply("m3", "REPLY two")}));
  EXPECT_TRUE(r.warnings.empty()) << warnings(r);
  EXPECT_EQ(store_->head(session()), std::optional<std::string>("m3"));
  EXPECT_EQ(spine_ids().size(), 8u);
  // A second resume lists the rebuilt result twice (the CLI rebuilds it again from the call):
  // one more branch, still no warning, and the model reads the result three times.
  ImportResult r2 = import(first + lines({kHeader, set_messages({kContext, user("u1", "PROMPT one"), call_parts("m1", "read_file__c1"),
                                                                 response("m1_response", "read_file__c1"),
                                                                 response("r1", "read_file__c1"), reply("m2", "REPLY one")}),
                                          user("u2", "PROMPT two"), reply("m3", "REPLY two"), kHeader,
                                          set_messages({kContext, user("u1", "PROMPT one"), call_parts("m1", "read_file__c1"),
                                                        response("m1_response", "read_file__c1"),
                                                        response("m1_response", "read_file__c1"),
                                                        response("r1", "read_file__c1"), reply("m2", "REPLY one"),
                                                        user("u2", "PROMPT two"), reply("m3", "REPLY two")}),
                                          user("u4", "PROMPT three")}));
  EXPECT_TRUE(r2.warnings.empty()) << warnings(r2);
  EXPECT_EQ(store_->head(session()), std::optional<std::string>("u4"));
  Json body = gemini_body();
  EXPECT_EQ(body["contents"][2]["parts"].size(), 3u);
}

// Gemini CLI, resuming, rebuilds each tool result as a user message "<id>_response" placed right
// after the call, before the recorded result: the model then reads both. The rewrite becomes a
// branch (the later turns recorded again as "<id>~r2"), the earlier chain stays, no warning.
TEST_F(GeminiImport, ResumeInsertedToolResponseBranchesAndKeepsTheEarlierChain) {
  ImportResult r = import(lines({kHeader, set_messages({kContext}), user("u1", "PROMPT one"), call("m1", "read_file__c1"),
                                 response("r1", "read_file__c1"), reply("m2", "REPLY one"), kHeader,
                                 set_messages({kContext, user("u1", "PROMPT one"), call_parts("m1", "read_file__c1"),
                                               response("m1_response", "read_file__c1"), response("r1", "read_file__c1"),
                                               reply("m2", "REPLY one")}),
                                 user("u2", "PROMPT two"), reply("m3", "REPLY two")}));
  EXPECT_EQ(count(r, "rewrite.reordered"), 0) << warnings(r);
  EXPECT_EQ(spine_ids(), (std::vector<std::string>{"ctx0", "u1", "m1", "m1_response", "r1~r2", "m2~r2", "u2", "m3"}));
  ASSERT_TRUE(store_->node("r1"));
  EXPECT_EQ(store_->node("r1")->predecessor, std::optional<std::string>("m1"));
  EXPECT_EQ(store_->node("m2")->predecessor, std::optional<std::string>("r1"));
  EXPECT_EQ(store_->node("r1~r2")->metadata["gemini_message_id"], "r1");
  // The render sends the result twice, as the client did, under its wire id (no "read_file__").
  Json body = gemini_body();
  ASSERT_EQ(body["contents"].size(), 6u);  // user(ctx,u1) model(call) user(2 results) model user model
  EXPECT_EQ(body["contents"][0]["parts"].size(), 2u);
  EXPECT_EQ(body["contents"][1]["parts"][0]["functionCall"]["id"], "c1");
  EXPECT_EQ(body["contents"][2]["parts"].size(), 2u);
  EXPECT_EQ(body["contents"][2]["parts"][1]["functionResponse"]["id"], "c1");
  EXPECT_EQ(body["contents"][2]["parts"][1]["functionResponse"]["response"]["output"], "alpha");
}

// Chat compression: the CLI records the snapshot and its acknowledgement as new messages, then
// rewrites the list as [context, snapshot, ack, kept turns...]. The replaced turns stay stored
// and a summary view node covers them; a second compression covers the first one's turns too.
TEST_F(GeminiImport, CompressionsBecomeSummaryViewNodes) {
  const std::string snap1 = R"({"id":"s1","timestamp":"t","type":"user","content":[{"text":"<state_snapshot>one</state_snapshot>"}]})";
  const std::string ack1 = R"({"id":"g1","timestamp":"t","type":"gemini","content":[{"text":"Got it. Thanks for the additional context!"}]})";
  const std::string snap2 = R"({"id":"s2","timestamp":"t","type":"user","content":[{"text":"<state_snapshot>two</state_snapshot>"}]})";
  const std::string ack2 = R"({"id":"g2","timestamp":"t","type":"gemini","content":[{"text":"Got it. Thanks for the additional context!"}]})";
  ImportResult r = import(lines({kHeader, set_messages({kContext}), user("u1", "PROMPT one"), reply("m1", "REPLY one"),
                                 user("u2", "PROMPT two"), reply("m2", "REPLY two"), user("u3", "PROMPT three"),
                                 snap1, ack1, set_messages({kContext, snap1, ack1, user("u3", "PROMPT three")}),
                                 reply("m3", "REPLY three"), user("u4", "PROMPT four"), reply("m4", "REPLY four"),
                                 user("u5", "PROMPT five"), snap2, ack2,
                                 set_messages({kContext, snap2, ack2, user("u5", "PROMPT five")}), reply("m5", "REPLY five")}));
  EXPECT_TRUE(r.warnings.empty()) << warnings(r);
  std::vector<Node> all = nodes();
  std::vector<Node> summaries;
  for (const auto& n : all)
    if (n.kind == kind::kSummary) summaries.push_back(n);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].covers_ids, (std::vector<std::string>{"u1", "m1", "u2", "m2"}));
  EXPECT_EQ(summaries[0].predecessor, std::optional<std::string>("ctx0"));
  EXPECT_EQ(summaries[0].content[0]["text"], "<state_snapshot>one</state_snapshot>");
  EXPECT_EQ(summaries[1].covers_ids, (std::vector<std::string>{"u1", "m1", "u2", "m2", "u3", "m3", "u4", "m4"}));
  // Every turn is a stored raw node; HEAD's spine is the raw chain.
  EXPECT_EQ(spine_ids(), (std::vector<std::string>{"ctx0", "u1", "m1", "u2", "m2", "u3", "m3", "u4", "m4", "u5", "m5"}));
  // The render reads [context, snapshot 2, ack, u5, m5], as the client's next request would.
  Json body = gemini_body();
  ASSERT_EQ(body["contents"].size(), 4u);
  EXPECT_EQ(body["contents"][0]["parts"][1]["text"], "<state_snapshot>two</state_snapshot>");
  EXPECT_EQ(body["contents"][1]["role"], "model");
  EXPECT_EQ(body["contents"][1]["parts"].size(), 1u);  // the ack only: no recap is added
  EXPECT_EQ(body["contents"][2]["parts"][0]["text"], "PROMPT five");
}

// A resume after a compression lists the snapshot messages again: they map to the summary.
TEST_F(GeminiImport, ResumeAfterCompressionKeepsTheSummary) {
  const std::string snap = R"({"id":"s1","timestamp":"t","type":"user","content":[{"text":"<state_snapshot>x</state_snapshot>"}]})";
  const std::string ack = R"({"id":"g1","timestamp":"t","type":"gemini","content":[{"text":"Got it."}]})";
  const std::vector<std::string> after = {kContext, snap, ack, user("u2", "PROMPT two"), reply("m2", "REPLY two")};
  ImportResult r = import(lines({kHeader, user("u1", "PROMPT one"), reply("m1", "REPLY one"), user("u2", "PROMPT two"), snap,
                                 ack, set_messages({kContext, snap, ack, user("u2", "PROMPT two")}), reply("m2", "REPLY two"),
                                 kHeader, set_messages(after), user("u3", "PROMPT three"), reply("m3", "REPLY three")}));
  EXPECT_TRUE(r.warnings.empty()) << warnings(r);
  int summaries = 0;
  for (const auto& n : nodes()) summaries += n.kind == kind::kSummary;
  EXPECT_EQ(summaries, 1);
  EXPECT_EQ(spine_ids().back(), "m3");
  EXPECT_EQ(gemini_body()["contents"][0]["parts"][1]["text"], "<state_snapshot>x</state_snapshot>");
}

// Bad input: a file cut mid-line keeps every complete record and warns at the cut line.
TEST_F(GeminiImport, FileCutMidLineWarnsWithItsLine) {
  ImportResult r = import(lines({kHeader, user("u1", "PROMPT one"), reply("m1", "REPLY one")}) +
                          R"({"id":"u2","timestamp":"t","type":"user","content":[{"te)");
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0].line, 4) << warnings(r);
  EXPECT_EQ(r.warnings[0].file, path_);
  EXPECT_EQ(spine_ids(), (std::vector<std::string>{"u1", "m1"}));
}

// Bad input: a header with no message at all is a session with a warning, not a crash.
TEST_F(GeminiImport, HeaderWithoutMessagesWarns) {
  ImportResult r = import(lines({kHeader, kHeader, R"({"$set":{"sessionId":"5e55a1b2-0000-4000-8000-000000000001"}})"}));
  EXPECT_EQ(count(r, "session.empty"), 1) << warnings(r);
  EXPECT_TRUE(store_->session(session()));
  EXPECT_TRUE(nodes().empty());
}

// Bad input: a rewrite that changes a known turn's text, or moves a turn without the CLI's
// reason, is reported with its line; both versions are kept.
TEST_F(GeminiImport, ContradictingRewriteWarnsAndLosesNothing) {
  ImportResult r = import(lines({kHeader, user("u1", "PROMPT one"), reply("m1", "REPLY one"), user("u2", "PROMPT two"),
                                 reply("m2", "REPLY two"),
                                 set_messages({user("u1", "PROMPT one EDITED"), reply("m1", "REPLY one"), user("u2", "PROMPT two"),
                                               reply("m2", "REPLY two")}),
                                 set_messages({user("u1", "PROMPT one"), user("u2", "PROMPT two"), reply("m1", "REPLY one"),
                                               reply("m2", "REPLY two")})}));
  ASSERT_EQ(count(r, "rewrite.changed"), 1) << warnings(r);
  EXPECT_EQ(count(r, "rewrite.reordered"), 1) << warnings(r);
  for (const auto& w : r.warnings) {
    EXPECT_EQ(w.file, path_);
    EXPECT_TRUE(w.line == 6 || w.line == 7) << warnings(r);
  }
  // The first version stays the node; the edit is a kept source record.
  EXPECT_EQ(store_->node("u1")->content[0]["text"], "PROMPT one");
  auto& q = store_->db().cached("SELECT count(*) FROM source_records WHERE raw LIKE '%EDITED%'");
  ResetOnExit reset(q);
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 1);
  // The reordered list is a branch; the first chain is whole.
  for (const char* id : {"u1", "m1", "u2", "m2"}) EXPECT_TRUE(store_->node(id)) << id;
  EXPECT_EQ(spine_ids().size(), 4u);
}

// A thought with a signature, a read_file of an image (result + inlineData in one user message)
// and an @file reference: thinking is stored (never sent back), images keep their MIME type.
TEST_F(GeminiImport, ThoughtsAndImages) {
  ImportResult r = import(lines(
      {kHeader, user("u1", "PROMPT look"),
       R"({"id":"m1","timestamp":"t","type":"gemini","content":"","thoughts":[{"subject":"Plan","description":"read it","timestamp":"t"}],"model":"gemini-2.5-flash","toolCalls":[{"id":"read_file__c9","name":"read_file","args":{"file_path":"dot.png"},"status":"success"}]})",
       R"({"id":"r1","timestamp":"t","type":"user","content":[{"functionResponse":{"id":"read_file__c9","name":"read_file","response":{"output":"Binary content provided (1 item(s))."}}},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]})",
       R"({"id":"m2","timestamp":"t","type":"gemini","content":[{"text":"a red dot","thoughtSignature":"c2ln"}]})"}));
  EXPECT_TRUE(r.warnings.empty()) << warnings(r);
  auto m1 = store_->node("m1");
  ASSERT_TRUE(m1);
  EXPECT_EQ(m1->content[0]["type"], "thinking");
  EXPECT_EQ(m1->content[0]["thinking"], "**Plan** read it");
  auto r1 = store_->node("r1");
  EXPECT_EQ(r1->role, "user");
  EXPECT_EQ(r1->content[1]["type"], "image");
  EXPECT_EQ(r1->content[1]["media_type"], "image/png");
  EXPECT_EQ(store_->node("m2")->content[0]["gemini_signature"], "c2ln");
  Json body = gemini_body();
  ASSERT_EQ(body["contents"].size(), 4u);
  EXPECT_EQ(body["contents"][1]["parts"].size(), 1u);  // the call, not the thought
  EXPECT_EQ(body["contents"][2]["parts"][1]["inlineData"]["mimeType"], "image/png");
}

// Resuming, the CLI writes a recorded thought back as a thought part "**subject** description"
// and drops tokens and model: the same turn, no warning, and the usage stays.
TEST_F(GeminiImport, ThoughtRewrittenAsPartIsTheSameTurn) {
  const std::string live =
      R"({"id":"m1","timestamp":"t","type":"gemini","content":"REPLY 42","thoughts":[{"subject":"Plan","description":"add them","timestamp":"t"}],"tokens":{"input":10,"output":2,"total":12},"model":"gemini-2.5-flash"})";
  const std::string rewritten =
      R"({"id":"m1","timestamp":"t2","type":"gemini","content":[{"text":"**Plan** add them","thought":true},{"text":"REPLY 42"}]})";
  ImportResult r = import(lines({kHeader, user("u1", "PROMPT"), live, kHeader, set_messages({user("u1", "PROMPT"), rewritten})}));
  EXPECT_TRUE(r.warnings.empty()) << warnings(r);
  std::vector<Node> all = nodes();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].content[0]["thinking"], "**Plan** add them");
  EXPECT_EQ(all[1].metadata["usage"]["input"], 10);
}

// Gemini CLI gives the session context message the same id in every session of a project: the
// second session's copy is "<id>@<session>", without a warning, and its chain starts there.
TEST_F(GeminiImport, SessionContextIdSharedAcrossSessions) {
  ImportResult a = import(lines({kHeader, kContext, user("u1", "PROMPT a")}), "session-2026-12-01T08-00-11111111.jsonl");
  const std::string other = R"({"id":"ctx0","timestamp":"later","type":"user","content":[{"text":"<session_context>\nenv\n</session_context>"}]})";
  ImportResult b = import(lines({kHeader, other, user("u2", "PROMPT b")}));
  EXPECT_TRUE(a.warnings.empty() && b.warnings.empty()) << warnings(a) << warnings(b);
  EXPECT_EQ(spine_ids(), (std::vector<std::string>{"ctx0@" + session(), "u2"}));
  ImportResult again = import(lines({kHeader, other, user("u2", "PROMPT b")}));
  for (const auto& s : again.sessions) EXPECT_EQ(s.nodes_added, 0);
  // A file that rewrites its list is read whole (History): the same rule.
  const std::string third = "session-2026-12-01T10-00-33333333";
  ImportResult c = import(lines({kHeader, other, user("u3", "PROMPT c"), set_messages({other, user("u3", "PROMPT c")})}),
                          third + ".jsonl");
  EXPECT_TRUE(c.warnings.empty()) << warnings(c);
  EXPECT_TRUE(store_->node("ctx0@" + third, false).has_value());
  EXPECT_EQ(store_->node("u3", false)->predecessor, "ctx0@" + third);
}

// Never a crash: the file cut after every 31st byte, and its lines shuffled, import with warnings at
// worst, and the session still satisfies every invariant (summaries included).
TEST(GeminiImportRobust, CutAndShuffledFilesImportAndVerify) {
  const std::string snap = R"({"id":"s1","timestamp":"t","type":"user","content":[{"text":"<state_snapshot>x</state_snapshot>"}]})";
  const std::string ack = R"({"id":"g1","timestamp":"t","type":"gemini","content":[{"text":"Got it."}]})";
  std::vector<std::string> ls = {kHeader, set_messages({kContext}), user("u1", "PROMPT one"), call("m1", "read_file__c1"),
                                 response("r1", "read_file__c1"), reply("m2", "REPLY one"), kHeader,
                                 set_messages({kContext, user("u1", "PROMPT one"), call_parts("m1", "read_file__c1"),
                                               response("m1_response", "read_file__c1"), response("r1", "read_file__c1"),
                                               reply("m2", "REPLY one")}),
                                 user("u2", "PROMPT two"), snap, ack, set_messages({kContext, snap, ack, user("u2", "PROMPT two")}),
                                 reply("m3", "REPLY two"), R"({"$rewindTo":"m3"})", user("u3", "PROMPT three")};
  const std::string whole = lines(ls);
  std::vector<std::string> variants;
  for (std::size_t cut = 1; cut < whole.size(); cut += 31) variants.push_back(whole.substr(0, cut));
  std::mt19937 rng(7);
  for (int k = 0; k < 10; ++k) {
    std::shuffle(ls.begin(), ls.end(), rng);
    variants.push_back(lines(ls));
  }
  const fs::path dir = fs::temp_directory_path() / ("ctxfold-gemini-robust-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  int i = 0;
  for (const auto& v : variants) {
    const fs::path db = dir / ("v" + std::to_string(i) + ".db");
    const fs::path file = dir / "session-2026-12-01T09-00-5e55a1b2.jsonl";
    std::ofstream(file, std::ios::binary | std::ios::trunc) << v;
    Store st = open_store(db.string(), Store::Mode::read_write);
    ImportOptions o;
    o.format = "gemini";  // a cut header cannot be detected; the importer itself is under test
    ASSERT_NO_THROW(import_paths(st, {file.string()}, o)) << "variant " << i;
    std::vector<std::string> sessions;
    for (const auto& s : st.sessions()) sessions.push_back(s.id);
    VerifyReport rep = verify_invariants(st, sessions);
    EXPECT_TRUE(rep.ok) << "variant " << i << "\n" << dump_json(verify_to_json(rep));
    ++i;
    fs::remove(db);
  }
  fs::remove_all(dir);
}


// A live recording (no $set, no $rewindTo) is read in two streamed passes: a message written
// again after later messages keeps its first place and takes its newest version; a call answered
// by a later result message gets no ":results" node, one answered nowhere does.
TEST_F(GeminiImport, LiveRecordingRewrittenLaterKeepsItsPlaceAndNewestVersion) {
  ImportResult r = import(lines({kHeader, kContext, user("u1", "PROMPT one"), reply("m1", "partial"),
                                 user("u2", "PROMPT two"), reply("m1", "FINAL one"), call("m2", "read_file__c1"),
                                 call("m3", "read_file__c2"), response("r3", "read_file__c2")}));
  EXPECT_TRUE(r.warnings.empty()) << warnings(r);
  std::vector<Node> all = nodes();
  std::vector<std::string> ids;
  for (const auto& n : all) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"ctx0", "u1", "m1", "u2", "m2", "m2:results", "m3", "r3"}));
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[2].content[0]["text"], "FINAL one");
  EXPECT_EQ(all[2].metadata["source"]["line"], 6);
  EXPECT_EQ(spine_ids(), ids);
}

}  // namespace
}  // namespace ctxfold
