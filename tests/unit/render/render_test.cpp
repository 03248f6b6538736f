#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "render/render.hpp"
#include "store/store.hpp"
#include "tokens/estimate.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class RenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-render-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
    store_.emplace(open_store(path_, Store::Mode::read_write));
    store_->create_session(SessionInfo{"s"});
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  Store& st() { return *store_; }

  /// Appends a message; HEAD follows when advance is set (the append rule: chain extension).
  Node add(const std::string& id, std::optional<std::string> pred, const std::string& role, Json content,
           bool advance = true, const std::string& k = kind::kMessage) {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = std::move(pred);
    n.kind = k;
    n.role = k == kind::kEvent ? "" : role;
    n.content = content.is_string() ? Json::array({Json{{"type", "text"}, {"text", content}}}) : content;
    EXPECT_EQ(st().append(n), AppendResult::added) << id;
    if (advance) st().move_head("s", id, "append");
    return n;
  }
  Node text(const std::string& id, std::optional<std::string> pred, const std::string& role, bool advance = true) {
    return add(id, std::move(pred), role, Json(role + " says " + id), advance);
  }
  /// n1..nN alternating user/assistant, n1 a root. HEAD moves once, to the last.
  void chain(int count, const std::string& prefix = "n") {
    Txn txn(st().db());
    std::optional<std::string> pred;
    for (int i = 1; i <= count; ++i) {
      std::string id = prefix + std::to_string(i);
      text(id, pred, i % 2 ? "user" : "assistant", false);
      pred = id;
    }
    st().move_head("s", prefix + std::to_string(count), "append");
    txn.commit();
  }
  Node summary(const std::string& id, std::optional<std::string> splice, std::vector<std::string> covers,
               const std::string& text_ = "summary of the earlier conversation") {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = std::move(splice);
    n.kind = kind::kSummary;
    n.role = "user";
    n.content = Json::array({Json{{"type", "text"}, {"text", text_}}});
    n.metadata = Json{{"strategy", "rolling"}};
    n.covers_ids = std::move(covers);
    EXPECT_EQ(st().append(n), AppendResult::added);
    return n;
  }
  static std::vector<std::string> range(const std::string& prefix, int from, int to) {
    std::vector<std::string> v;
    for (int i = from; i <= to; ++i) v.push_back(prefix + std::to_string(i));
    return v;
  }
  static Json use(const std::string& id, const std::string& name, Json input) {
    return Json{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", std::move(input)}};
  }
  static Json result(const std::string& id, Json content, bool err = false) {
    return Json{{"type", "tool_result"}, {"tool_use_id", id}, {"content", std::move(content)}, {"is_error", err}};
  }
  static Json txt(const std::string& t) { return Json{{"type", "text"}, {"text", t}}; }

  Rendered render(std::optional<std::string> head = std::nullopt) {
    RenderOptions o;
    o.head = std::move(head);
    return render_context(st(), "s", o);
  }

  fs::path dir_;
  std::string path_;
  std::optional<Store> store_;
};

// 200 nodes, nodes 1-150 compacted: the summary plus 151-200, covered nodes absent.
TEST_F(RenderTest, SummaryReplacesCoveredSegment) {
  chain(200);
  summary("S", std::nullopt, range("n", 1, 150));
  Rendered r = render();
  std::vector<std::string> want{"S"};
  for (auto& id : range("n", 151, 200)) want.push_back(id);
  EXPECT_EQ(r.reads, want);
  ASSERT_EQ(r.items.size(), 51u);
  EXPECT_EQ(r.items[0].kind, kind::kSummary);
  ASSERT_TRUE(r.summary);
  EXPECT_EQ(*r.summary, "S");
  for (const auto& id : r.reads) EXPECT_NE(id, "n150");
  // Rolling projection (docs/strategies.md "rolling"): summary, a bounded recap quoting covered
  // user messages (the first one and the recent ones), tail.
  ASSERT_EQ(r.sections.size(), 3u);
  EXPECT_EQ(r.sections[0].kind, "summary");
  EXPECT_EQ(r.sections[0].ids, std::vector<std::string>{"S"});
  EXPECT_EQ(r.sections[1].kind, "recap");
  EXPECT_EQ(r.sections[1].ids, (std::vector<std::string>{"n1", "n145", "n147", "n149"}));
  EXPECT_EQ(r.sections[2].kind, "tail");
  EXPECT_EQ(r.sections[2].ids.size(), 50u);
  EXPECT_EQ(r.sections[2].ids.front(), "n151");
  EXPECT_EQ(r.spine_length, 51);  // n200..n151, then n150 where the jump happens
  EXPECT_EQ(r.estimated_tokens,
            r.sections[0].estimated_tokens + r.sections[1].estimated_tokens + r.sections[2].estimated_tokens);
  // The summary turn is a user message in provider formats; the recap travels inside it.
  Json oa = render_request_body(r, RenderFormat::openai)["messages"];
  ASSERT_EQ(oa.size(), 51u);
  EXPECT_EQ(oa[0]["role"], "user");
  std::string first = oa[0]["content"].is_string() ? oa[0]["content"].get<std::string>() : dump_json(oa[0]["content"]);
  ASSERT_TRUE(oa[0]["content"].is_array()) << first;
  EXPECT_EQ(oa[0]["content"][0], (Json{{"type", "text"}, {"text", "summary of the earlier conversation"}}));
  EXPECT_NE(first.find("user says n149"), std::string::npos) << first;
  EXPECT_EQ(first.find("user says n151"), std::string::npos) << "the tail is never quoted in the recap";
  EXPECT_EQ(oa[1], (Json{{"role", "user"}, {"content", "user says n151"}}));
}

// docs/render.md "The system prompt": unknown unless a record, the spine or --system gives it.
TEST_F(RenderTest, SystemPromptRecordRendersFirstAndUnknownSaysSo) {
  chain(4);
  Rendered none = render();
  EXPECT_FALSE(none.system.known);
  EXPECT_EQ(none.system.source, "none");
  EXPECT_EQ(render_to_json(none, RenderFormat::openai)["system_prompt"]["known"], false);

  // A system_prompt event recorded after n2: a render at n4 starts with it; one at n1 does not.
  Node ev;
  ev.id = "sys1";
  ev.session = "s";
  ev.kind = kind::kEvent;
  ev.content = Json::array({txt("You are a coding agent."), txt("Tools: Bash.")});
  ev.metadata = Json{{"event", "system_prompt"}, {"tools", Json::array({Json{{"name", "Bash"}}})}};
  ASSERT_EQ(st().append(ev), AppendResult::added);
  Rendered r = render();
  ASSERT_TRUE(r.system.known);
  EXPECT_EQ(r.system.source, "record");
  EXPECT_EQ(r.system.node, std::optional<std::string>("sys1"));
  EXPECT_EQ(r.system.tools, 1);
  ASSERT_FALSE(r.sections.empty());
  EXPECT_EQ(r.sections[0].kind, "system");
  EXPECT_EQ(r.reads.front(), "sys1");
  Json body = render_request_body(r, RenderFormat::anthropic);
  // One system message of two blocks goes out as the two blocks, as the client sent them.
  ASSERT_TRUE(body["system"].is_array()) << dump_json(body);
  EXPECT_EQ(body["system"].size(), 2u);
  EXPECT_EQ(body["system"][1]["text"], "Tools: Bash.");
  EXPECT_EQ(render_request_body(r, RenderFormat::openai)["messages"][0]["role"], "system");
  Rendered early = render(std::string("n1"));
  EXPECT_FALSE(early.system.known) << "recorded after n1's append";

  // --system replaces it and is not a read.
  RenderOptions o;
  o.system_text = "Given prompt.";
  Rendered given = render_context(st(), "s", o);
  EXPECT_EQ(given.system.source, "option");
  EXPECT_EQ(render_request_body(given, RenderFormat::anthropic)["system"], "Given prompt.");
  for (const auto& id : given.reads) EXPECT_NE(id, "sys1");
  EXPECT_EQ(given.reads.size(), 4u);
}

// docs/render.md "The system prompt" 4: the newest rendered node carrying the prompt wins, else
// the session's metadata; the synthetic message is not a read.
TEST_F(RenderTest, SystemPromptFromNodeMetadataThenSessionMetadata) {
  SessionInfo si{"t"};
  si.metadata = Json{{"system_prompt", "session prompt"}};
  st().create_session(si);
  auto put = [&](const std::string& id, std::optional<std::string> pred, const std::string& role, Json meta) {
    Node n;
    n.id = id;
    n.session = "t";
    n.predecessor = std::move(pred);
    n.kind = kind::kMessage;
    n.role = role;
    n.content = Json::array({txt(role + " " + id)});
    n.metadata = std::move(meta);
    EXPECT_EQ(st().append(n), AppendResult::added);
    st().move_head("t", id, "append");
  };
  put("u1", std::nullopt, "user", Json::object());
  RenderOptions o;
  Rendered first = render_context(st(), "t", o);
  EXPECT_EQ(first.system.source, "session");
  EXPECT_EQ(render_request_body(first, RenderFormat::anthropic)["system"], "session prompt");
  EXPECT_EQ(first.reads, std::vector<std::string>{"u1"});
  put("a1", "u1", "assistant", Json{{"system_blocks", Json::array({txt("old A"), txt("old B")})}});
  put("u2", "a1", "user", Json::object());
  put("a2", "u2", "assistant", Json{{"system_blocks", Json::array({txt("new A"), txt("new B")})}});
  Rendered r = render_context(st(), "t", o);
  EXPECT_EQ(r.system.source, "node");
  EXPECT_EQ(r.system.node, std::optional<std::string>("a2"));
  EXPECT_EQ(render_request_body(r, RenderFormat::anthropic)["system"],
            Json::array({txt("new A"), txt("new B")}));
  EXPECT_EQ(r.reads, (std::vector<std::string>{"u1", "a1", "u2", "a2"}));
  o.head = "u2";
  Rendered at = render_context(st(), "t", o);
  EXPECT_EQ(at.system.node, std::optional<std::string>("a1"));
}

// docs/render.md "Imported sessions": no recap after a summary the agent made.
TEST_F(RenderTest, ImportedSummaryGetsNoRecap) {
  chain(10);
  Node n;
  n.id = "S";
  n.session = "s";
  n.kind = kind::kSummary;
  n.role = "user";
  n.content = Json::array({txt("the agent's own summary")});
  n.metadata = Json{{"strategy", "rolling"}, {"origin", "import"}};
  n.covers_ids = range("n", 1, 6);
  ASSERT_EQ(st().append(n), AppendResult::added);
  Rendered r = render();
  ASSERT_TRUE(r.summary);
  for (const auto& sec : r.sections) EXPECT_NE(sec.kind, "recap");
  Json oa = render_request_body(r, RenderFormat::openai)["messages"];
  ASSERT_EQ(oa.size(), 5u);  // the summary, n7..n10
  EXPECT_EQ(oa[0]["content"], "the agent's own summary");
}

// docs/render.md "Rendering at a node": between two compactions the earlier summary is in force.
TEST_F(RenderTest, HeadBetweenTwoCompactionsUsesTheEarlierSummary) {
  chain(12);
  summary("S1", std::nullopt, range("n", 1, 4), "first summary");
  summary("S2", std::nullopt, range("n", 1, 8), "second summary");
  Rendered latest = render();
  ASSERT_TRUE(latest.summary);
  EXPECT_EQ(*latest.summary, "S2");
  Rendered at6 = render(std::string("n6"));
  ASSERT_TRUE(at6.summary) << "n6's spine holds S1's segment, not S2's";
  EXPECT_EQ(*at6.summary, "S1");
  EXPECT_EQ(at6.reads, (std::vector<std::string>{"S1", "n5", "n6"}));
  Rendered at3 = render(std::string("n3"));
  EXPECT_FALSE(at3.summary);
  EXPECT_EQ(at3.reads, (std::vector<std::string>{"n1", "n2", "n3"}));
  Rendered at12 = render(std::string("n12"));
  ASSERT_TRUE(at12.summary);
  EXPECT_EQ(*at12.summary, "S2");
}

// [t1..t4], cut after t2: render = [summary(t1,t2), t3, t4].
TEST_F(RenderTest, CutAfterSecondTurn) {
  chain(4, "t");
  summary("S", std::nullopt, {"t1", "t2"});
  Rendered r = render();
  EXPECT_EQ(r.reads, (std::vector<std::string>{"S", "t3", "t4"}));
  Json body = render_request_body(r, RenderFormat::anthropic);
  ASSERT_EQ(body["messages"].size(), 2u);  // summary and t3 merge into one user turn
  EXPECT_EQ(body["messages"][0]["role"], "user");
  // summary text, the recap quoting t1 (the covered user message), then t3.
  ASSERT_EQ(body["messages"][0]["content"].size(), 3u);
  EXPECT_NE(body["messages"][0]["content"][1]["text"].get<std::string>().find("user says t1"), std::string::npos);
  EXPECT_EQ(body["messages"][0]["content"][2]["text"], "user says t3");
  EXPECT_EQ(body["messages"][1], (Json{{"role", "assistant"}, {"content", Json::array({txt("assistant says t4")})}}));
}

TEST_F(RenderTest, SystemPrefixSummaryTailSections) {
  text("sys", std::nullopt, "system");
  text("u1", "sys", "user");
  text("a1", "u1", "assistant");
  text("u2", "a1", "user");
  text("a2", "u2", "assistant");
  summary("S", "u1", {"a1", "u2"});
  Rendered r = render();
  EXPECT_EQ(r.reads, (std::vector<std::string>{"sys", "u1", "S", "a2"}));
  ASSERT_EQ(r.sections.size(), 5u);
  EXPECT_EQ(r.sections[0].kind, "system");
  EXPECT_EQ(r.sections[1].kind, "prefix");
  EXPECT_EQ(r.sections[1].ids, std::vector<std::string>{"u1"});
  EXPECT_EQ(r.sections[2].kind, "summary");
  EXPECT_EQ(r.sections[3].kind, "recap");
  EXPECT_EQ(r.sections[3].ids, std::vector<std::string>{"u2"});
  EXPECT_EQ(r.sections[4].kind, "tail");
  EXPECT_EQ(r.sections[0].estimated_tokens, estimate_node_tokens(*st().node("sys")));
  Json an = render_to_json(r, RenderFormat::anthropic);
  EXPECT_EQ(an["system"], "system says sys");
  EXPECT_EQ(an["schema"], "ctxfold.render/1");
  EXPECT_EQ(an["format"], "anthropic");
  EXPECT_EQ(an["summary"], "S");
}

// A summary on branch A never leaks into sibling branch B (branch isolation, docs/model.md "How a
// render uses a summary").
TEST_F(RenderTest, BranchIsolation) {
  text("r", std::nullopt, "user");
  text("A1", "r", "assistant");
  text("A2", "A1", "user");
  text("B1", "r", "assistant", false);
  summary("S", "r", {"A1"});
  Rendered a = render();  // HEAD = A2
  EXPECT_EQ(a.reads, (std::vector<std::string>{"r", "S", "A2"}));
  st().move_head("s", "B1", "checkout");
  Rendered b = render();
  EXPECT_EQ(b.reads, (std::vector<std::string>{"r", "B1"}));
  EXPECT_FALSE(b.summary);
  // A --head inside the covered segment (A1 is covers.last) renders the summary in its place.
  Rendered c = render(std::string("A1"));
  EXPECT_EQ(c.reads, (std::vector<std::string>{"r", "S"}));
  // --head at the splice point renders raw: the segment is not on that spine.
  Rendered d = render(std::string("r"));
  EXPECT_EQ(d.reads, (std::vector<std::string>{"r"}));
}

// The same state renders to the same bytes, also from a fresh read-only connection.
TEST_F(RenderTest, ByteIdenticalRenders) {
  chain(30);
  summary("S", std::nullopt, range("n", 1, 10));
  std::vector<std::string> first;
  for (auto f : {RenderFormat::ctxfold, RenderFormat::openai, RenderFormat::anthropic, RenderFormat::gemini,
                 RenderFormat::text, RenderFormat::responses})
    first.push_back(dump_json(render_to_json(render(), f)));
  for (std::size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(first[i], dump_json(render_to_json(render(), static_cast<RenderFormat>(i))));
  store_.reset();
  Store ro = open_store(path_, Store::Mode::read_only);
  Rendered again = render_context(ro, "s", RenderOptions{});
  EXPECT_EQ(first[1], dump_json(render_to_json(again, RenderFormat::openai)));
  EXPECT_EQ(first[0], dump_json(render_to_json(again, RenderFormat::ctxfold)));
}

// Cost grows with the render, not the history: a 10,000-node session with all but the last 50
// summarised visits 51 spine nodes.
TEST_F(RenderTest, CostProportionalToRender) {
  chain(10000);
  summary("S", std::nullopt, range("n", 1, 9950));
  auto t0 = std::chrono::steady_clock::now();
  Rendered r = render();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.spine_length, 51);
  ASSERT_EQ(r.items.size(), 51u);
  EXPECT_EQ(r.reads.front(), "S");
  EXPECT_EQ(r.reads[1], "n9951");
  EXPECT_LT(ms, 500);
  // Raw, the same session walks all 10,000.
  RenderOptions raw;
  raw.strategy = "raw";
  EXPECT_EQ(render_context(st(), "s", raw).spine_length, 10000);
}

// Appending to the tail leaves the rendered prefix unchanged (prompt-cache stability).
TEST_F(RenderTest, PrefixStability) {
  chain(20);
  summary("S", std::nullopt, range("n", 1, 6));
  Json before = render_request_body(render(), RenderFormat::openai)["messages"];
  text("n21", "n20", "user");
  text("n22", "n21", "assistant");
  Json after = render_request_body(render(), RenderFormat::openai)["messages"];
  ASSERT_EQ(after.size(), before.size() + 2);
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i], after[i]) << i;
  Rendered from_pred = render(std::string("n21"));
  EXPECT_EQ(from_pred.reads.size() + 1, render().reads.size());
}

TEST_F(RenderTest, EventsAndOtherViewNodesAreTransparent) {
  text("u1", std::nullopt, "user");
  add("e1", "u1", "", Json("progress: running"), true, kind::kEvent);
  text("a1", "e1", "assistant");
  Rendered r = render();
  EXPECT_EQ(r.reads, (std::vector<std::string>{"u1", "a1"}));
  EXPECT_EQ(r.spine_length, 3);
}

// Results that do not sit next to their call (a user text in between) move up to the call.
TEST_F(RenderTest, ToolResultsMoveToTheirCall) {
  text("u1", std::nullopt, "user");
  add("a1", "u1", "assistant",
      Json::array({txt("running two"), use("T1", "Bash", {{"cmd", "ls"}}), use("T2", "Read", {{"path", "x"}})}));
  add("r1", "a1", "tool", Json::array({result("T1", "file-a\nfile-b")}));
  text("u2", "r1", "user");
  add("r2", "u2", "tool", Json::array({result("T2", Json::array({txt("contents of x")}))}));
  text("a2", "r2", "assistant");
  Rendered r = render();
  EXPECT_TRUE(r.repairs.empty());
  EXPECT_EQ(r.reads, (std::vector<std::string>{"u1", "a1", "r1", "u2", "r2", "a2"}));
  Json oa = render_request_body(r, RenderFormat::openai)["messages"];
  ASSERT_EQ(oa.size(), 6u);
  EXPECT_EQ(oa[1]["role"], "assistant");
  EXPECT_EQ(oa[1]["content"], "running two");
  EXPECT_EQ(oa[1]["tool_calls"][0],
            (Json{{"id", "T1"}, {"type", "function"}, {"function", {{"name", "Bash"}, {"arguments", "{\"cmd\":\"ls\"}"}}}}));
  EXPECT_EQ(oa[2], (Json{{"role", "tool"}, {"tool_call_id", "T1"}, {"content", "file-a\nfile-b"}}));
  EXPECT_EQ(oa[3], (Json{{"role", "tool"}, {"tool_call_id", "T2"}, {"content", "contents of x"}}));
  EXPECT_EQ(oa[4], (Json{{"role", "user"}, {"content", "user says u2"}}));
  Json an = render_request_body(r, RenderFormat::anthropic)["messages"];
  ASSERT_EQ(an.size(), 4u);  // user, assistant, user(results + u2), assistant
  EXPECT_EQ(an[2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(an[2]["content"][1]["tool_use_id"], "T2");
  EXPECT_EQ(an[2]["content"][1]["content"], Json::array({txt("contents of x")}));
  EXPECT_EQ(an[2]["content"][2], txt("user says u2"));
}

// A call with no recorded result gets a synthetic error result right after its turn.
TEST_F(RenderTest, MissingResultGetsSyntheticErrorResult) {
  text("u1", std::nullopt, "user");
  add("a1", "u1", "assistant", Json::array({use("T9", "Bash", {{"cmd", "sleep 100"}})}));
  text("u2", "a1", "user");
  Rendered r = render();
  ASSERT_EQ(r.repairs.size(), 1u);
  EXPECT_EQ(r.repairs[0].kind, "synthetic_result");
  EXPECT_EQ(r.repairs[0].node, "a1");
  EXPECT_EQ(r.repairs[0].tool_use_id, "T9");
  Json oa = render_request_body(r, RenderFormat::openai)["messages"];
  ASSERT_EQ(oa.size(), 4u);
  EXPECT_EQ(oa[1]["content"], nullptr);
  EXPECT_EQ(oa[2], (Json{{"role", "tool"}, {"tool_call_id", "T9"}, {"content", kNoToolResultText}}));
  EXPECT_EQ(oa[3]["role"], "user");
  Json an = render_request_body(r, RenderFormat::anthropic)["messages"];
  ASSERT_EQ(an.size(), 3u);
  EXPECT_EQ(an[2]["content"][0], (Json{{"type", "tool_result"}, {"tool_use_id", "T9"}, {"content", kNoToolResultText},
                                       {"is_error", true}}));
  EXPECT_EQ(an[2]["content"][1], txt("user says u2"));
  Json j = render_to_json(r, RenderFormat::openai);
  EXPECT_EQ(j["repairs"][0], (Json{{"kind", "synthetic_result"}, {"node", "a1"}, {"tool_use_id", "T9"}}));
}

// A result whose call was summarised away becomes text; the summary's call is gone with it.
TEST_F(RenderTest, OrphanResultBecomesText) {
  text("u1", std::nullopt, "user");
  add("a1", "u1", "assistant", Json::array({use("T1", "Bash", {{"cmd", "make"}})}));
  add("r1", "a1", "tool", Json::array({result("T1", "build ok")}));
  text("a2", "r1", "assistant");
  summary("S", std::nullopt, {"u1", "a1"});
  Rendered r = render();
  EXPECT_EQ(r.reads, (std::vector<std::string>{"S", "r1", "a2"}));
  ASSERT_EQ(r.repairs.size(), 1u);
  EXPECT_EQ(r.repairs[0].kind, "orphan_result_as_text");
  EXPECT_EQ(r.repairs[0].node, "r1");
  EXPECT_EQ(r.repairs[0].tool_use_id, "T1");
  Json oa = render_request_body(r, RenderFormat::openai)["messages"];
  ASSERT_EQ(oa.size(), 3u);
  EXPECT_EQ(oa[1], (Json{{"role", "user"}, {"content", "[tool result for T1, whose call is not in this context]\nbuild ok"}}));
  for (const auto& m : oa) EXPECT_NE(m["role"], "tool");
}

TEST_F(RenderTest, OpenAiShapes) {
  std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEUlEQVR4nGP4z8DwH4QZMBgAoXkL9U3EmgcAAAAASUVORK5CYII=";
  text("sys", std::nullopt, "system");
  add("u1", "sys", "user", Json::array({txt("look"), Json{{"type", "image"}, {"media_type", "image/png"}, {"data", png}}}));
  add("a1", "u1", "assistant",
      Json::array({Json{{"type", "thinking"}, {"thinking", "hmm"}, {"signature", "sig"}},
                   Json{{"type", "opaque"}, {"provider", "openai"}, {"data", "enc"}}, txt("a 2x3 image")}));
  add("a2", "a1", "assistant", Json::array({Json{{"type", "thinking"}, {"thinking", "only thoughts"}}}));
  Rendered r = render();
  Json oa = render_request_body(r, RenderFormat::openai);
  ASSERT_EQ(oa.size(), 1u);  // exactly {"messages": [...]}
  Json m = oa["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], (Json{{"role", "system"}, {"content", "system says sys"}}));
  EXPECT_EQ(m[1]["content"][1],
            (Json{{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64," + png}}}}));
  EXPECT_EQ(m[2], (Json{{"role", "assistant"}, {"content", "a 2x3 image"}}));  // a1+a2 one turn, thinking dropped
  std::string text = render_to_text(r);
  EXPECT_NE(text.find("## user (u1)\nlook\n[image 2x3 image/png]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("## assistant (a1, a2)\n"), std::string::npos) << text;
}

TEST_F(RenderTest, AnthropicShapes) {
  text("sys1", std::nullopt, "system");
  text("sys2", "sys1", "system");
  text("u1", "sys2", "user");
  text("u2", "u1", "user");
  add("a1", "u2", "assistant",
      Json::array({Json{{"type", "thinking"}, {"thinking", "signed"}, {"signature", "sig"}},
                   Json{{"type", "thinking"}, {"thinking", "unsigned"}},
                   Json{{"type", "opaque"}, {"provider", "openai"}, {"data", "enc"}}, txt(""), txt("answer")}));
  Rendered r = render();
  Json body = render_request_body(r, RenderFormat::anthropic);
  EXPECT_EQ(body["system"], "system says sys1\n\nsystem says sys2");
  Json m = body["messages"];
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], (Json{{"role", "user"}, {"content", Json::array({txt("user says u1"), txt("user says u2")})}}));
  EXPECT_EQ(m[1]["content"], Json::array({Json{{"type", "thinking"}, {"thinking", "signed"}, {"signature", "sig"}},
                                           txt("answer")}));
}

TEST_F(RenderTest, ErrorsForUnknownHeadAndMissingHead) {
  try {
    render();
    FAIL() << "expected render.no_head";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "render.no_head");
    EXPECT_EQ(e.exit(), Exit::bad_input);
  }
  text("u1", std::nullopt, "user");
  try {
    render(std::string("nope"));
    FAIL() << "expected node.unknown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "node.unknown");
  }
}

// --as-of reads the state at that boundary: a summary appended later is not applied.
TEST_F(RenderTest, AsOfIgnoresLaterSummary) {
  chain(6);
  std::int64_t boundary = st().max_seq();
  summary("S", std::nullopt, range("n", 1, 4));
  RenderOptions o;
  o.as_of = boundary;
  Rendered old = render_context(st(), "s", o);
  EXPECT_EQ(old.reads.size(), 6u);
  EXPECT_FALSE(old.summary);
  EXPECT_EQ(render().reads, (std::vector<std::string>{"S", "n5", "n6"}));
}

// A summary whose predecessor is not the splice point of its segment is not applied.
TEST_F(RenderTest, SummaryWithWrongSpliceRendersRaw) {
  chain(5);
  summary("S", "n1", {"n3", "n4"});  // splice should be n2
  Rendered r = render();
  EXPECT_EQ(r.reads, range("n", 1, 5));
  EXPECT_FALSE(r.summary);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("summary 'S' was not applied: its predecessor is not the predecessor", 0), 0u)
      << r.warnings[0];
}

// An imported summary sitting on the chain (boundary -> summary -> next turn) is read where it
// sits and its covered segment above it is skipped.
TEST_F(RenderTest, SummaryOnTheChain) {
  chain(4);
  add("b", "n4", "", Json("compact boundary"), false, kind::kEvent);
  Node s;
  s.id = "S";
  s.session = "s";
  s.predecessor = "b";
  s.kind = kind::kSummary;
  s.role = "user";
  s.content = Json::array({txt("the summary")});
  s.covers_ids = range("n", 1, 4);
  ASSERT_EQ(st().append(s), AppendResult::added);
  text("n5", "S", "user");
  Rendered r = render();
  EXPECT_EQ(r.reads, (std::vector<std::string>{"S", "n5"}));
}

}  // namespace
}  // namespace ctxfold
