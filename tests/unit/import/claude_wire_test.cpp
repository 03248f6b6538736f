// Claude Code 2.1.3xx records that change what the model reads (docs/formats/claude-code.md):
// attachments with "rendered" text, compactions that keep messages verbatim after the summary,
// boundaries separated from their summary, the request shapes the client records. Each fixture is
// written here, in the shape the real client writes (observed with the conformance suite).

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "import/import.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "util/json.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class ClaudeWireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-ccwire-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = std::make_unique<Store>(open_store((dir_ / "t.db").string(), Store::Mode::read_write));
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  ImportResult import(const std::string& path) {
    ImportResult res;
    Txn txn(store_->db());
    ImportSink sink(*store_, res, path);
    import_claude_code(path, sink);
    txn.commit();
    return res;
  }
  std::string write(const std::string& name, const std::vector<Json>& records) {
    fs::path p = dir_ / name;
    std::ofstream out(p, std::ios::binary);
    for (const auto& r : records) out << dump_json(r) << "\n";
    return p.string();
  }
  static std::map<std::string, int> codes(const ImportResult& r) {
    std::map<std::string, int> m;
    for (const auto& w : r.warnings) ++m[w.code];
    return m;
  }
  /// The Anthropic request body rendered from HEAD (or from HEAD_ID).
  Json body(const std::string& session, std::optional<std::string> head = std::nullopt) {
    RenderOptions o;
    o.head = head;
    return render_request_body(render_context(*store_, session, o), RenderFormat::anthropic);
  }
  /// (role, text-or-id) of every block of a body's messages, tool results with their text.
  static std::vector<std::string> flat(const Json& b) {
    std::vector<std::string> out;
    for (const auto& m : b["messages"]) {
      const std::string role = m["role"];
      for (const auto& c : m["content"]) {
        const std::string t = c["type"];
        if (t == "text") out.push_back(role + ":" + c["text"].get<std::string>());
        else if (t == "tool_use") out.push_back(role + ":use " + c["id"].get<std::string>());
        else if (t == "tool_result")
          out.push_back(role + ":result " + c["tool_use_id"].get<std::string>() + " " +
                        (c["content"].is_string() ? c["content"].get<std::string>() : dump_json(c["content"])));
        else out.push_back(role + ":" + t);
      }
    }
    return out;
  }

  static Json user(const std::string& uuid, const Json& parent, const Json& content) {
    return Json{{"type", "user"}, {"uuid", uuid}, {"parentUuid", parent}, {"sessionId", "s"},
                {"message", {{"role", "user"}, {"content", content}}}};
  }
  static Json assistant(const std::string& uuid, const Json& parent, const std::string& msg_id, const Json& content) {
    return Json{{"type", "assistant"}, {"uuid", uuid}, {"parentUuid", parent}, {"sessionId", "s"},
                {"message", {{"id", msg_id}, {"role", "assistant"}, {"content", content}}}};
  }
  static Json attachment(const std::string& uuid, const std::string& parent, const std::string& type,
                         const Json& rendered, const std::string& role, bool beside = false) {
    Json a{{"type", "attachment"}, {"uuid", uuid}, {"parentUuid", parent}, {"sessionId", "s"},
           {"attachment", {{"type", type}}}};
    if (!rendered.is_null()) a["rendered"] = rendered;
    if (!role.empty()) a["renderedRole"] = role;
    if (beside) a["renderedBesideToolResult"] = true;
    return a;
  }
  static Json rendered(const std::string& text) { return Json::array({Json{{"content", text}}}); }
  static Json text(const std::string& t) { return Json::array({Json{{"type", "text"}, {"text", t}}}); }

  fs::path dir_;
  std::unique_ptr<Store> store_;
};

// The client bubbles the attachments that follow a prompt above its text, in the same user turn,
// and ends the last one with a newline where the prompt's text joins it.
TEST_F(ClaudeWireTest, AttachmentsAfterAPromptGoBeforeItsText) {
  auto f = write("s1.jsonl", {user("u1", nullptr, "first prompt"),
                              attachment("a1", "u1", "environment", rendered("<system-reminder>\nenv\n</system-reminder>"), "system"),
                              attachment("a2", "a1", "prompt_snapshot", nullptr, ""),
                              attachment("a3", "a2", "date", rendered("<system-reminder>\ndate\n</system-reminder>"), "user"),
                              assistant("m1", "a3", "msg_1", text("answer"))});
  auto res = import(f);
  EXPECT_TRUE(res.warnings.empty());
  auto u1 = store_->node("u1");
  ASSERT_TRUE(u1);
  ASSERT_EQ(u1->content.size(), 3u);
  EXPECT_EQ(u1->content[0]["text"], "<system-reminder>\nenv\n</system-reminder>");
  EXPECT_EQ(u1->content[1]["text"], "<system-reminder>\ndate\n</system-reminder>\n");
  EXPECT_EQ(u1->content[2]["text"], "first prompt");
  ASSERT_TRUE(u1->metadata.contains("attachments"));
  EXPECT_EQ(u1->metadata["attachments"].size(), 2u);
  auto a1 = store_->node("a1");
  ASSERT_TRUE(a1);
  EXPECT_EQ(a1->kind, "event");
  EXPECT_EQ(a1->metadata["delivered_in"], "u1");
  std::vector<std::string> want{"user:<system-reminder>\nenv\n</system-reminder>",
                                "user:<system-reminder>\ndate\n</system-reminder>\n", "user:first prompt",
                                "assistant:answer"};
  EXPECT_EQ(flat(body("s1")), want);
}

// A "system" attachment after a tool result is appended to the result's text (its trailing
// whitespace trimmed, a blank line between); a "user" one beside a tool result is a text block.
TEST_F(ClaudeWireTest, AttachmentsAfterAToolResult) {
  Json use = Json::array({Json{{"type", "tool_use"}, {"id", "t1"}, {"name", "Read"}, {"input", Json::object()}}});
  Json result = Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "1\tline\n2\t"}}});
  auto f = write("s2.jsonl", {user("u1", nullptr, "go"), assistant("m1", "u1", "msg_1", use),
                              user("r1", "m1", result),
                              attachment("a1", "r1", "total_tokens_reminder", rendered("<system-reminder>\nleft\n</system-reminder>"), "system"),
                              attachment("a2", "a1", "remote_session_change", rendered("<system-reminder>\nattr\n</system-reminder>"), "user", true),
                              assistant("m2", "a2", "msg_2", text("done"))});
  auto res = import(f);
  EXPECT_TRUE(res.warnings.empty());
  auto r1 = store_->node("r1");
  ASSERT_TRUE(r1);
  EXPECT_EQ(r1->role, "tool");
  ASSERT_EQ(r1->content.size(), 2u);
  EXPECT_EQ(r1->content[0]["content"], "1\tline\n2\n\n<system-reminder>\nleft\n</system-reminder>");
  EXPECT_EQ(r1->content[1]["text"], "<system-reminder>\nattr\n</system-reminder>");
  std::vector<std::string> want{"user:go", "assistant:use t1",
                                "user:result t1 1\tline\n2\n\n<system-reminder>\nleft\n</system-reminder>",
                                "user:<system-reminder>\nattr\n</system-reminder>", "assistant:done"};
  EXPECT_EQ(flat(body("s2")), want);
}

// A tool result whose content is blocks (a sub-agent's report): a "system" attachment is a text
// block appended inside it, the text before it ending with a newline.
TEST_F(ClaudeWireTest, AttachmentIntoABlockToolResult) {
  Json use = Json::array({Json{{"type", "tool_use"}, {"id", "t1"}, {"name", "Agent"}, {"input", Json::object()}}});
  Json result = Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", text("report")}}});
  auto f = write("s10.jsonl", {user("u1", nullptr, "delegate"), assistant("m1", "u1", "msg_1", use),
                               user("r1", "m1", result),
                               attachment("a1", "r1", "total_tokens_reminder", rendered("<system-reminder>\nleft\n</system-reminder>"), "system"),
                               assistant("m2", "a1", "msg_2", text("done"))});
  import(f);
  auto r1 = store_->node("r1");
  ASSERT_TRUE(r1);
  const Json& c = r1->content[0]["content"];
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["text"], "report\n");
  EXPECT_EQ(c[1]["text"], "<system-reminder>\nleft\n</system-reminder>");
}

// After an assistant message there is no user record to join: the attachment is a user message of
// its own. An unknown renderedRole is warned about (file and line) and its text kept.
TEST_F(ClaudeWireTest, AttachmentOfItsOwnAndUnknownRole) {
  auto f = write("s3.jsonl", {user("u1", nullptr, "hi"), assistant("m1", "u1", "msg_1", text("hello")),
                              attachment("a1", "m1", "queued_command", rendered("queued words"), "system"),
                              attachment("a2", "a1", "future_kind", rendered("odd words"), "narrator")});
  auto res = import(f);
  auto c = codes(res);
  EXPECT_EQ(c["attachment.role_unknown"], 1);
  ASSERT_EQ(res.warnings.size(), 1u);
  EXPECT_EQ(res.warnings[0].line, 4);
  auto a1 = store_->node("a1");
  ASSERT_TRUE(a1);
  EXPECT_EQ(a1->kind, "message");
  EXPECT_EQ(a1->role, "user");
  EXPECT_EQ(a1->content[0]["text"], "queued words");
  auto a2 = store_->node("a2");
  ASSERT_TRUE(a2);
  EXPECT_EQ(a2->content[0]["text"], "odd words");
  EXPECT_EQ(store_->head("s3"), "a2");
  std::vector<std::string> want{"user:hi", "assistant:hello", "user:queued words", "user:odd words"};
  EXPECT_EQ(flat(body("s3")), want);
}

// A manual compaction that keeps the last assistant message verbatim (preservedSegment /
// preservedMessages): the summary covers only what came before it, and it renders after the
// summary. Attachments written after the boundary's user records go before the first of them, and
// a user record another one joins on the wire ends with a newline.
TEST_F(ClaudeWireTest, PreservedSegmentRendersAfterTheSummary) {
  Json boundary{{"type", "system"}, {"subtype", "compact_boundary"}, {"uuid", "b1"}, {"parentUuid", nullptr},
                {"logicalParentUuid", "m2"}, {"sessionId", "s"}, {"content", "Conversation compacted"},
                {"compactMetadata",
                 {{"trigger", "manual"}, {"preTokens", 22000}, {"postTokens", 2600},
                  {"preservedSegment", {{"headUuid", "m2"}, {"anchorUuid", "sum"}, {"tailUuid", "m2"}}},
                  {"preservedMessages", {{"anchorUuid", "sum"}, {"uuids", {"m2"}}, {"allUuids", {"m2"}}}}}}};
  Json summary = user("sum", "b1", "This session is being continued. Summary: the user said hi twice.");
  summary["isCompactSummary"] = true;
  auto f = write("s4.jsonl", {user("u1", nullptr, "hi"), assistant("m1", "u1", "msg_1", text("hello")),
                              user("u2", "m1", "hi again"), assistant("m2", "u2", "msg_2", text("hello again")),
                              boundary, summary, user("c1", "sum", "<local-command-stdout>Compacted</local-command-stdout>"),
                              attachment("a1", "c1", "date", rendered("<system-reminder>\ndate\n</system-reminder>"), "system"),
                              user("u3", "a1", "after"), assistant("m3", "u3", "msg_3", text("ok"))});
  auto res = import(f);
  EXPECT_TRUE(res.warnings.empty()) << (res.warnings.empty() ? "" : res.warnings[0].message);
  auto s = store_->node("sum");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "summary");
  std::vector<std::string> covers{"u1", "m1", "u2"};
  EXPECT_EQ(s->covers_ids, covers);
  EXPECT_EQ(s->metadata["postTokens"], 2600);
  EXPECT_EQ(s->metadata["trigger"], "manual");
  EXPECT_EQ(s->metadata["preserved"], Json::array({"m2"}));
  auto c1 = store_->node("c1");
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->content[0]["text"], "<system-reminder>\ndate\n</system-reminder>\n");
  std::vector<std::string> want{"user:This session is being continued. Summary: the user said hi twice.",
                                "assistant:hello again",
                                "user:<system-reminder>\ndate\n</system-reminder>\n",
                                "user:<local-command-stdout>Compacted</local-command-stdout>\n", "user:after",
                                "assistant:ok"};
  EXPECT_EQ(flat(body("s4")), want);
}

// An auto-compaction mid-turn: attachment records stand between the boundary and its summary, and
// the attachments written after the summary go before its text. A preserved id the file never
// wrote is warned about with the boundary's line and covered as usual.
TEST_F(ClaudeWireTest, BoundaryBeforeAttachmentsAndUnknownPreservedId) {
  Json use = Json::array({Json{{"type", "tool_use"}, {"id", "t1"}, {"name", "Bash"}, {"input", Json::object()}}});
  Json result = Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "step-one"}}});
  Json boundary{{"type", "system"}, {"subtype", "compact_boundary"}, {"uuid", "b1"}, {"parentUuid", nullptr},
                {"logicalParentUuid", "r1"}, {"sessionId", "s"}, {"content", "Conversation compacted"},
                {"compactMetadata",
                 {{"trigger", "auto"}, {"preTokens", 195000}, {"postTokens", 2622},
                  {"preservedMessages", {{"uuids", {"never-written"}}}}}}};
  Json summary = user("sum", "x1", "Continued. Summary: step one ran.");
  summary["isCompactSummary"] = true;
  auto f = write("s5.jsonl", {user("u1", nullptr, "do the steps"), assistant("m1", "u1", "msg_1", use),
                              user("r1", "m1", result), boundary,
                              attachment("x1", "b1", "session_context", nullptr, ""), summary,
                              attachment("a1", "sum", "model", rendered("<system-reminder>\nmodel\n</system-reminder>"), "system"),
                              assistant("m2", "a1", "msg_2", text("continuing"))});
  auto res = import(f);
  auto c = codes(res);
  EXPECT_EQ(c["summary.preserved_unknown"], 1);
  ASSERT_EQ(res.warnings.size(), 1u);
  EXPECT_EQ(res.warnings[0].line, 4);
  auto s = store_->node("sum");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "summary");
  EXPECT_EQ(s->metadata["trigger"], "auto");
  EXPECT_EQ(s->metadata["preTokens"], 195000);
  EXPECT_EQ(s->metadata["postTokens"], 2622);
  std::vector<std::string> covers{"u1", "m1", "r1"};
  EXPECT_EQ(s->covers_ids, covers);
  std::vector<std::string> want{"user:<system-reminder>\nmodel\n</system-reminder>\n",
                                "user:Continued. Summary: step one ran.", "assistant:continuing"};
  EXPECT_EQ(flat(body("s5")), want);
}

// The request shape the client records (api-request-shape, named by each api-request and each
// assistant record's requestRef) gives the session's system prompt and tools, and each assistant
// node names the shape it was answered under.
TEST_F(ClaudeWireTest, RequestShapeGivesTheSystemPrompt) {
  Json shape{{"type", "api-request-shape"}, {"sessionId", "s"}, {"shapeHash", "h1"},
             {"shape",
              {{"system", Json::array({Json{{"type", "text"}, {"text", "You are an agent."}},
                                       Json{{"type", "text"}, {"text", "\nBe brief."}}})},
               {"tools", Json::array({Json{{"name", "Bash"}, {"input_schema", Json::object()}}})}}}};
  Json request{{"type", "api-request"}, {"sessionId", "s"}, {"id", "req-1"}, {"shapeHash", "h1"},
               {"keep", 0}, {"tail", Json::array({"x"})}};
  Json a = assistant("m1", "u1", "msg_1", text("hello"));
  a["requestRef"] = "req-1";
  auto f = write("s6.jsonl", {user("u1", nullptr, "hi"), shape, request, a});
  auto res = import(f);
  EXPECT_TRUE(res.warnings.empty());
  auto info = store_->session("s6");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata["system_prompt"], "You are an agent.\n\nBe brief.");
  ASSERT_EQ(info->metadata["system_blocks"].size(), 2u);
  EXPECT_EQ(info->metadata["system_blocks"][1]["text"], "\nBe brief.");
  ASSERT_EQ(info->metadata["tools"].size(), 1u);
  EXPECT_EQ(info->metadata["tools"][0]["name"], "Bash");
  auto m1 = store_->node("m1");
  ASSERT_TRUE(m1);
  EXPECT_EQ(m1->metadata["request_shape"], "h1");
  EXPECT_EQ(m1->metadata["request_ref"], "req-1");
  EXPECT_EQ(m1->metadata["system_prompt"], "You are an agent.\n\nBe brief.");
  EXPECT_EQ(store_->source_record_count("s6"), 2);  // the shape and the request are kept
}

// Without a recorded request shape, the newest prompt_snapshot attachment gives the prompt (its
// sections joined with a blank line) and the tools.
TEST_F(ClaudeWireTest, PromptSnapshotGivesTheSystemPromptWhenNoShape) {
  Json snap = attachment("p1", "u1", "prompt_snapshot", nullptr, "");
  snap["attachment"]["systemPrompt"] = Json::array({"\nYou are an agent.", "# Tone\nBe brief."});
  snap["attachment"]["tools"] = Json::array({Json{{"name", "Read"}, {"schema", {{"name", "Read"}, {"input_schema", Json::object()}}}}});
  auto f = write("s11.jsonl", {user("u1", nullptr, "hi"), snap, assistant("m1", "p1", "msg_1", text("hello"))});
  import(f);
  auto info = store_->session("s11");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata["system_prompt"], "\nYou are an agent.\n\n# Tone\nBe brief.");
  ASSERT_EQ(info->metadata["tools"].size(), 1u);
  EXPECT_EQ(info->metadata["tools"][0]["name"], "Read");
  EXPECT_TRUE(info->metadata["tools"][0].contains("input_schema"));
  EXPECT_EQ(info->metadata["system_prompt_source"]["line"], 2);
}

// A transcript imported while it ended on a side record (a progress event hanging off the last
// assistant message) and imported again after it grew: HEAD moves to the new leaf of the chain.
TEST_F(ClaudeWireTest, ReimportAfterGrowthMovesHeadPastASideRecord) {
  Json progress{{"type", "progress"}, {"uuid", "p1"}, {"parentUuid", "m1"}, {"sessionId", "s"},
                {"data", {{"type", "hook_progress"}}}};
  std::vector<Json> records{user("u1", nullptr, "hi"), assistant("m1", "u1", "msg_1", text("hello")), progress};
  auto f = write("s7.jsonl", records);
  import(f);
  EXPECT_EQ(store_->head("s7"), "p1");
  records.push_back(user("u2", "m1", "more"));
  records.push_back(assistant("m2", "u2", "msg_2", text("sure")));
  write("s7.jsonl", records);
  auto res = import(f);
  EXPECT_EQ(store_->head("s7"), "m2");
  // A branch the client wrote (a message off the chain): HEAD is its newest leaf, as one import
  // of the file makes it (docs/formats/claude-code.md "Read while it is written").
  records.push_back(user("u3", "m1", "another branch"));
  write("s7.jsonl", records);
  import(f);
  EXPECT_EQ(store_->head("s7"), "u3");
  // A HEAD a person moved (checkout) stays where it is when the file grows off its chain.
  store_->move_head("s7", "m2", "checkout");
  records.push_back(user("u4", "m1", "a third branch"));
  write("s7.jsonl", records);
  import(f);
  EXPECT_EQ(store_->head("s7"), "m2");
}

/// Every text block of an Anthropic body (inside tool results too) that holds only whitespace.
int blank_text_blocks(const Json& body) {
  int n = 0;
  auto blank = [](const Json& b) {
    if (!b.is_object() || b.value("type", "") != "text") return false;
    const std::string t = b.value("text", "");
    return t.find_first_not_of(" \t\n\r\f\v") == std::string::npos;
  };
  for (const auto& m : body["messages"])
    for (const auto& b : m["content"]) {
      if (blank(b)) ++n;
      if (b.is_object() && b.contains("content") && b["content"].is_array())
        for (const auto& x : b["content"]) n += blank(x) ? 1 : 0;
    }
  return n;
}

// The Messages API rejects a text block with nothing but whitespace: no render of any shipped
// transcript (every format, from HEAD and from every 7th node of HEAD's spine) holds one.
TEST_F(ClaudeWireTest, NoWhitespaceOnlyTextInAnyAnthropicBody) {
  const std::string root = CTXFOLD_TRANSCRIPTS_DIR;
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string p = e.path().string();
    if (p.find("/subagents/") != std::string::npos || p.find("/tool-results/") != std::string::npos) continue;
    const std::string ext = e.path().extension().string();
    if (ext == ".jsonl" || ext == ".json") files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 8u);
  int renders = 0;
  for (const auto& f : files) {
    try {
      import_paths(*store_, {f}, ImportOptions{});
    } catch (const std::exception&) {
      continue;  // not a transcript (a metadata file): nothing to render
    }
  }
  for (const auto& info : store_->sessions()) {
    auto head = store_->head(info.id);
    if (!head) continue;
    std::vector<std::string> at{*head};
    std::optional<std::string> cur = store_->predecessor_of(*head);
    for (int k = 1; cur; ++k, cur = store_->predecessor_of(*cur))
      if (k % 7 == 0) at.push_back(*cur);
    for (const auto& h : at) {
      Json b = body(info.id, h);
      ++renders;
      EXPECT_EQ(blank_text_blocks(b), 0) << info.id << " at " << h;
    }
  }
  EXPECT_GT(renders, 100);
}

// The renderer drops whitespace-only text it would otherwise send.
TEST_F(ClaudeWireTest, WhitespaceOnlyTextIsDropped) {
  auto f = write("s8.jsonl", {user("u1", nullptr, Json::array({Json{{"type", "text"}, {"text", " \n\t"}},
                                                               Json{{"type", "text"}, {"text", "real words"}}})),
                              assistant("m1", "u1", "msg_1", Json::array({Json{{"type", "text"}, {"text", "\n\n"}},
                                                                          Json{{"type", "text"}, {"text", "answer"}}}))});
  import(f);
  Json b = body("s8");
  EXPECT_EQ(blank_text_blocks(b), 0);
  std::vector<std::string> want{"user:real words", "assistant:answer"};
  EXPECT_EQ(flat(b), want);
}

// Parallel tool results render in the order the client recorded them (as they finished), which is
// the order it sends them, not the order of the calls.
TEST_F(ClaudeWireTest, ParallelResultsKeepTheirRecordedOrder) {
  Json uses = Json::array();
  for (const char* id : {"ta", "tb"}) uses.push_back(Json{{"type", "tool_use"}, {"id", id}, {"name", "Bash"}, {"input", Json::object()}});
  auto res_of = [](const char* id, const char* out) {
    return Json::array({Json{{"type", "tool_result"}, {"tool_use_id", id}, {"content", out}}});
  };
  auto f = write("s9.jsonl", {user("u1", nullptr, "two at once"),
                              assistant("m1", "u1", "msg_1", Json::array({uses[0]})),
                              assistant("m2", "m1", "msg_1", Json::array({uses[1]})),
                              user("rb", "m2", res_of("tb", "second call, first done")),
                              user("ra", "m1", res_of("ta", "first call, done last")),
                              assistant("m3", "ra", "msg_2", text("both"))});
  import(f);
  std::vector<std::string> want{"user:two at once", "assistant:use ta", "assistant:use tb",
                                "user:result tb second call, first done", "user:result ta first call, done last",
                                "assistant:both"};
  EXPECT_EQ(flat(body("s9")), want);
}

}  // namespace
}  // namespace ctxfold
