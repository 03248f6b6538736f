#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "import/import.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "util/json.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

const std::string kClaude = std::string(CTXFOLD_TRANSCRIPTS_DIR) + "/claude-code";
const std::string kShort = kClaude + "/v2.1.38_short_parallel_tool_rejection.jsonl";
const std::string kHeavy = kClaude + "/v2.1.38_tool_heavy_websearch_queue.jsonl";
const std::string kExcerpt = kClaude + "/v2.1.11_image_in_tool_result_EXCERPT.jsonl";
const std::string kImages = kClaude + "/images_resume_branch_v2.1.22-2.1.29/47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c.jsonl";
const std::string kInline = kClaude + "/inline_sidechains_v1.0.98/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl";
const std::string kInit = kClaude + "/inline_sidechains_v1.0.98/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
const std::string kAsync = kClaude + "/async_agents_api_errors_v2.1.15/0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl";
const std::string kManual = kClaude + "/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
const std::string kAuto = kClaude + "/auto_compaction_v2.1_full/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl";

class ClaudeImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-claude-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = std::make_unique<Store>(open_store((dir_ / "t.db").string(), Store::Mode::read_write));
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  /// Imports a main file and (like the driver) its subagent files, in one transaction.
  ImportResult import(const std::string& path, bool with_subagents = true) {
    ImportResult res;
    Txn txn(store_->db());
    std::vector<std::string> files{path};
    if (with_subagents)
      for (const auto& s : claude_code_subagent_files(path)) files.push_back(s);
    for (const auto& f : files) {
      ImportSink sink(*store_, res, f);
      import_claude_code(f, sink);
    }
    txn.commit();
    return res;
  }

  std::string write(const std::string& name, const std::vector<Json>& records) {
    std::string bytes;
    for (const auto& r : records) bytes += dump_json(r) + "\n";
    return write_raw(name, bytes);
  }
  std::string write_raw(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }

  static std::map<std::string, int> codes(const ImportResult& r) {
    std::map<std::string, int> m;
    for (const auto& w : r.warnings) ++m[w.code];
    return m;
  }
  static const SessionImport* session(const ImportResult& r, const std::string& id) {
    for (const auto& s : r.sessions)
      if (s.session == id) return &s;
    return nullptr;
  }
  static std::int64_t added(const ImportResult& r) {
    std::int64_t n = 0;
    for (const auto& s : r.sessions) n += s.nodes_added;
    return n;
  }

  /// HEAD's spine, root first.
  std::vector<Node> spine(const std::string& session) {
    std::vector<Node> out;
    auto head = store_->head(session);
    std::optional<std::string> cur = head;
    std::set<std::string> seen;
    while (cur && seen.insert(*cur).second) {
      auto n = store_->node(*cur);
      if (!n) break;
      out.push_back(*n);
      cur = n->predecessor;
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  /// Every tool_use on the spine has its tool_result later on the spine and vice versa.
  void expect_spine_balanced(const std::string& session, int expected_open = 0) {
    std::set<std::string> open;
    int orphan_results = 0;
    for (const Node& n : spine(session)) {
      for (const auto& id : tool_result_ids(n)) {
        if (open.erase(id) == 0) ++orphan_results;
      }
      for (const auto& id : tool_use_ids(n)) open.insert(id);
    }
    EXPECT_EQ(orphan_results, 0) << session;
    EXPECT_EQ(static_cast<int>(open.size()), expected_open) << session;
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
};

// ---------------------------------------------------------------------------------------------
// Real transcripts (counts measured by reading the files; see docs/import.md "Claude Code").

TEST_F(ClaudeImportTest, ShortParallelToolRejection) {
  auto res = import(kShort);
  const std::string sid = "v2.1.38_short_parallel_tool_rejection";
  ASSERT_NE(session(res, sid), nullptr);
  // 14 uuid lines; assistant lines 5-8 and 10 (message ...pYiiQa) form one node: 10 nodes.
  EXPECT_EQ(session(res, sid)->nodes_added, 10);
  EXPECT_TRUE(res.warnings.empty());
  EXPECT_EQ(store_->source_record_count(sid), 1);  // the file-history-snapshot
  auto info = store_->session(sid);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, "main");
  EXPECT_EQ(info->format, "claude-code");
  EXPECT_EQ(info->metadata.value("inner_session_id", ""), "55604662-cf2a-4331-851a-ec234028f8ca");

  auto a = store_->node("1b7d717f-d6a2-46a6-8575-fa4f937450ea");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->role, "assistant");
  ASSERT_EQ(a->content.size(), 5u);
  EXPECT_EQ(a->content[0]["type"], "text");
  EXPECT_EQ(a->content[1]["type"], "thinking");
  EXPECT_EQ(a->content[3]["type"], "tool_use");
  EXPECT_EQ(a->content[4]["id"], "toolu_01FdQ8qTyVyZjE3Kw4dguQGx");
  EXPECT_EQ(a->metadata["source"]["parts"].size(), 5u);
  EXPECT_EQ(a->metadata["source"]["parts"][4]["line"], 10);
  EXPECT_TRUE(a->metadata.contains("usage"));
  EXPECT_FALSE(store_->node("194d33b0-6cf7-4c54-8200-07dfd3fb88cf"));  // merged line, no node of its own

  // Parallel results linearized: result 2 follows result 1, source parent kept.
  auto r1 = store_->node("ff80d82a-4ac1-4945-83dd-1226f98b8cf6");
  auto r2 = store_->node("2618ef5d-c1c6-4938-b81c-8a3230ccad76");
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->role, "tool");
  EXPECT_EQ(r1->predecessor, a->id);
  EXPECT_EQ(r2->predecessor, r1->id);
  EXPECT_EQ(r2->metadata["source_parent"], "ed2ec700-d1ee-4a18-9100-da63317716fc");
  EXPECT_TRUE(r2->metadata.contains("tool_use_result"));

  EXPECT_EQ(store_->head(sid), "40003bdd-2613-4975-83d5-36fb0b6bbc59");
  auto sp = spine(sid);
  EXPECT_EQ(sp.size(), 9u);  // 2 leading hook events, prompt, assistant, 2 results, text, 2 system events
  expect_spine_balanced(sid);
  // progress/system lines are events kept in the chain with the whole record.
  EXPECT_EQ(sp.front().kind, "event");
  EXPECT_EQ(sp.front().metadata["raw"]["type"], "progress");
  EXPECT_EQ(sp.back().metadata["event"], "system/local_command");
}

TEST_F(ClaudeImportTest, ReimportAddsNothingForEveryRealFile) {
  for (const std::string& f : {kShort, kHeavy, kExcerpt, kImages, kInit, kInline, kAsync, kManual, kAuto}) {
    auto first = import(f);
    EXPECT_GT(added(first), 0) << f;
    std::int64_t records = 0;
    for (const auto& s : store_->sessions()) records += store_->source_record_count(s.id);
    auto second = import(f);
    EXPECT_EQ(added(second), 0) << f;
    std::int64_t records2 = 0;
    for (const auto& s : store_->sessions()) records2 += store_->source_record_count(s.id);
    EXPECT_EQ(records, records2) << f;
    for (const auto& s : second.sessions) {
      EXPECT_EQ(s.nodes_skipped, session(first, s.session)->nodes_added) << s.session;
      EXPECT_EQ(s.head, session(first, s.session)->head) << s.session;
    }
  }
}

TEST_F(ClaudeImportTest, ExcerptWithMissingParentAndImageInToolResult) {
  auto res = import(kExcerpt);
  const std::string sid = "v2.1.11_image_in_tool_result_EXCERPT";
  EXPECT_EQ(session(res, sid)->nodes_added, 2);
  auto c = codes(res);
  EXPECT_EQ(c["parent.missing"], 1);
  EXPECT_EQ(res.warnings.size(), 1u);
  EXPECT_EQ(res.warnings[0].line, 1);
  auto a = store_->node("089e1b89-36c2-40c1-a035-eee5d97ac9a3");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->predecessor);
  EXPECT_EQ(a->metadata["missing_predecessor"], "2a4fc666-8005-46f1-8e8c-e6960fb0e3a7");
  auto r = store_->node("96f49361-5c8d-4351-b32a-1c912090abb9");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->role, "tool");
  ASSERT_EQ(r->content.size(), 1u);
  const Json& tr = r->content[0];
  EXPECT_EQ(tr["type"], "tool_result");
  ASSERT_TRUE(tr["content"].is_array());
  bool found = false;
  for (const auto& b : tr["content"])
    if (b["type"] == "image") {
      found = true;
      EXPECT_EQ(b["media_type"], "image/png");
      EXPECT_GT(b["data"].get<std::string>().size(), 500000u);
      EXPECT_TRUE(b.contains("width"));
      EXPECT_GT(b.value("width", 0), 0);
      EXPECT_GT(b.value("height", 0), 0);
      EXPECT_FALSE(b.contains("source"));
    }
  EXPECT_TRUE(found);
  expect_spine_balanced(sid);
}

TEST_F(ClaudeImportTest, ManualCompactionBecomesASummaryOverThePreBoundaryChain) {
  auto res = import(kManual);
  const std::string sid = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
  EXPECT_EQ(session(res, sid)->nodes_added, 1595);
  EXPECT_EQ(store_->source_record_count(sid), 20);
  auto c = codes(res);
  // The acompact worker's first line points into the main file: a link, not a missing parent.
  EXPECT_EQ(c["parent.missing"], 0);
  EXPECT_EQ(res.warnings.size(), 0u);

  auto views = store_->view_nodes(sid, "summary");
  ASSERT_EQ(views.size(), 1u);
  auto s = store_->node(views[0].id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->id, "94000b8f-fa9f-4b7b-8d81-cdc73aa8a085");
  EXPECT_EQ(s->role, "user");
  EXPECT_FALSE(s->predecessor);
  EXPECT_EQ(s->metadata["strategy"], "rolling");
  EXPECT_EQ(s->metadata["origin"], "import");
  EXPECT_EQ(s->metadata["trigger"], "manual");
  EXPECT_EQ(s->metadata["preTokens"], 142431);
  ASSERT_EQ(s->content.size(), 1u);
  EXPECT_EQ(s->content[0]["text"].get<std::string>().rfind("This session is being continued", 0), 0u);
  ASSERT_EQ(s->covers_ids.size(), 297u);
  EXPECT_EQ(s->covers_ids.front(), "948b4049-6323-44df-9a10-62503cacfd05");
  EXPECT_EQ(s->covers_ids.back(), "23b73f9a-2123-4b8e-81a2-b98378c7498f");

  // The boundary continues the raw chain from its logical parent; the summary's children
  // hang off the boundary.
  auto b = store_->node("434dc859-6299-4713-8613-d28662692f06");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->kind, "event");
  EXPECT_EQ(b->predecessor, "23b73f9a-2123-4b8e-81a2-b98378c7498f");
  EXPECT_TRUE(b->metadata["source_parent"].is_null());
  EXPECT_EQ(b->metadata["logical_parent"], "23b73f9a-2123-4b8e-81a2-b98378c7498f");
  auto after = store_->node("bc8137ed-4f00-41c3-824d-3e220d6d5def");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->predecessor, b->id);
  EXPECT_EQ(after->metadata["source_parent"], s->id);
  EXPECT_EQ(after->metadata["is_meta"], true);

  // HEAD's spine is raw and continuous, and starts with exactly the covered segment.
  EXPECT_EQ(store_->head(sid), "45346f2a-5334-4c6c-b1c1-77a7247a1b2c");
  auto sp = spine(sid);
  ASSERT_GT(sp.size(), s->covers_ids.size());
  for (std::size_t i = 0; i < s->covers_ids.size(); ++i) ASSERT_EQ(sp[i].id, s->covers_ids[i]) << i;
  EXPECT_EQ(sp[s->covers_ids.size()].id, b->id);
  for (const auto& n : sp) EXPECT_NE(n.kind, "summary");
  expect_spine_balanced(sid);

  // Subagents: the Task agent is linked to its Task call; the compaction worker is not.
  auto agent = store_->session(sid + "/agent-aac57f5");
  ASSERT_TRUE(agent);
  EXPECT_EQ(agent->kind, "sidechain");
  EXPECT_EQ(agent->parent_session, sid);
  ASSERT_TRUE(agent->parent_node);
  auto task = store_->node(*agent->parent_node);
  ASSERT_TRUE(task);
  EXPECT_EQ(task->session, sid);
  bool has_task = false;
  for (const auto& blk : task->content)
    if (blk["type"] == "tool_use" && blk["id"] == agent->metadata["tool_use_id"]) has_task = true;
  EXPECT_TRUE(has_task);
  EXPECT_EQ(session(res, sid + "/agent-aac57f5")->nodes_added, 28);
  expect_spine_balanced(sid + "/agent-aac57f5");
  auto worker = store_->session(sid + "/agent-acompact-946d2b");
  ASSERT_TRUE(worker);
  EXPECT_FALSE(worker->parent_node);
  auto wsp = spine(sid + "/agent-acompact-946d2b");
  ASSERT_EQ(wsp.size(), 2u);
  EXPECT_FALSE(wsp[0].metadata.contains("missing_predecessor"));
  EXPECT_EQ(wsp[0].metadata["cross_session_parent"], "23b73f9a-2123-4b8e-81a2-b98378c7498f");
  EXPECT_TRUE(store_->node("23b73f9a-2123-4b8e-81a2-b98378c7498f"));
}

TEST_F(ClaudeImportTest, AutoCompactionFullSession) {
  auto res = import(kAuto);
  const std::string sid = "fa812bfe-b295-4cca-9c2f-fdf01028cb46";
  // 1696 records of the main file and the 13 hook reminders its compaction worker replays.
  EXPECT_EQ(session(res, sid)->nodes_added, 1696 + 13);
  EXPECT_EQ(session(res, sid + "/agent-a93ccab")->nodes_added, 91);
  EXPECT_EQ(session(res, sid + "/agent-aa84377")->nodes_added, 77);
  EXPECT_EQ(session(res, sid + "/agent-acompact-70d8e7")->nodes_added, 15);
  auto c = codes(res);
  EXPECT_EQ(c["parent.missing"], 0);  // the worker's 14 requests name main-file records: links
  EXPECT_EQ(res.warnings.size(), 0u);
  auto views = store_->view_nodes(sid, "summary");
  ASSERT_EQ(views.size(), 1u);
  auto s = store_->node(views[0].id);
  EXPECT_EQ(s->id, "7bf19bfa-9a71-402e-9a81-2dad042e663f");
  EXPECT_EQ(s->metadata["trigger"], "auto");
  EXPECT_EQ(s->metadata["preTokens"], 167117);
  ASSERT_EQ(s->covers_ids.size(), 301u + 13u);  // the reminders precede the compaction
  EXPECT_EQ(s->covers_ids.front(), "b3b111c8-e98b-454b-b771-876d770e9e88");
  EXPECT_EQ(s->covers_ids.back(), "b6055828-bf17-4729-9a40-5383d688a628");
  auto sp = spine(sid);
  for (std::size_t i = 0; i < s->covers_ids.size(); ++i) ASSERT_EQ(sp[i].id, s->covers_ids[i]) << i;
  EXPECT_EQ(store_->head(sid), "16af1a30-bb5d-4e73-af54-b6b7e8d54bf3");
  expect_spine_balanced(sid);
  for (const std::string a : {"agent-a93ccab", "agent-aa84377"}) {
    auto info = store_->session(sid + "/" + a);
    ASSERT_TRUE(info);
    ASSERT_TRUE(info->parent_node) << a;
    EXPECT_TRUE(store_->node(*info->parent_node)) << a;
    expect_spine_balanced(sid + "/" + a);
  }
}

// The compaction worker's file is read with the record limit like every other file: a reminder
// line longer than the limit is not spliced into the main chain (the worker's own import skips
// and reports it, line.too_long), and one within the limit is.
TEST_F(ClaudeImportTest, CompactionWorkerLinesObeyTheRecordLimit) {
  auto line = [](const char* type, const char* uuid, const char* parent, Json content, bool meta = false) {
    Json j{{"type", type}, {"uuid", uuid}, {"sessionId", "S"}, {"timestamp", "2026-01-01T00:00:00Z"},
           {"message", {{"role", type}, {"content", std::move(content)}}}};
    j["parentUuid"] = parent ? Json(parent) : Json(nullptr);
    if (meta) j["isMeta"] = true;
    return j;
  };
  const std::string main = write("S.jsonl", {line("user", "u1", nullptr, "hello"),
                                             line("assistant", "a1", "u1", Json::array({{{"type", "text"}, {"text", "hi"}}})),
                                             line("user", "u2", "a1", "next")});
  write("S/subagents/agent-acompact-abc.jsonl",
        {line("user", "r-short", "a1", "<system-reminder>short</system-reminder>", true),
         line("user", "r-long", "u2", "<system-reminder>" + std::string(4000, 'x') + "</system-reminder>", true)});
  ImportResult res;
  {
    Txn txn(store_->db());
    std::vector<std::string> files{main};
    for (const auto& f : claude_code_subagent_files(main)) files.push_back(f);
    for (const auto& f : files) {
      ImportSink sink(*store_, res, f);
      sink.set_max_record_bytes(2048);
      import_claude_code(f, sink);
    }
    txn.commit();
  }
  EXPECT_TRUE(store_->node("r-short~main"));
  EXPECT_FALSE(store_->node("r-long~main"));
  EXPECT_EQ(codes(res)["line.too_long"], 1);
}

// The auto-compaction worker replays 13 <system-reminder> records (hook output) that the main file
// never wrote; each is spliced into the main chain after the record it followed, and the chain
// continues from it.
TEST_F(ClaudeImportTest, CompactionWorkerRemindersAreSplicedIntoTheMainChain) {
  import(kAuto);
  const std::string sid = "fa812bfe-b295-4cca-9c2f-fdf01028cb46";
  auto r = store_->node("df228d7c-0645-4033-a81e-ca7a9c66f409~main");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->session, sid);
  EXPECT_EQ(r->role, role::kUser);
  EXPECT_EQ(r->predecessor, "9f5fc94c-95e1-43f9-b701-1d1cffa159e0");  // the Edit result at main line 827
  EXPECT_EQ(r->metadata["is_meta"], true);
  EXPECT_EQ(r->metadata["spliced_from_worker"], true);
  EXPECT_EQ(r->metadata["source"]["file"], sid + "/subagents/agent-acompact-70d8e7.jsonl");
  EXPECT_EQ(r->metadata["source"]["line"], 1);
  ASSERT_TRUE(r->content.is_array() && r->content.size() == 1u);
  EXPECT_EQ(r->content[0]["text"].get<std::string>().rfind("<system-reminder>\nPostToolUse:Edit hook additional", 0),
            0u);
  auto sp = spine(sid);
  auto views = store_->view_nodes(sid, "summary");
  ASSERT_EQ(views.size(), 1u);
  auto summary = store_->node(views[0].id);
  std::set<std::string> covered(summary->covers_ids.begin(), summary->covers_ids.end());
  std::size_t at = sp.size(), spliced = 0;
  for (std::size_t i = 0; i < sp.size(); ++i) {
    if (sp[i].id == r->id) at = i;
    if (sp[i].metadata.value("spliced_from_worker", false)) {
      ++spliced;
      EXPECT_TRUE(covered.count(sp[i].id)) << sp[i].id;  // all precede the compaction
    }
  }
  ASSERT_LT(at + 1, sp.size());
  EXPECT_EQ(sp[at - 1].id, "9f5fc94c-95e1-43f9-b701-1d1cffa159e0");
  EXPECT_EQ(sp[at + 1].role, role::kAssistant);
  EXPECT_EQ(spliced, 13u);
  // The worker's own copy stays in the worker session under the plain uuid.
  auto w = store_->node("df228d7c-0645-4033-a81e-ca7a9c66f409");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->session, sid + "/agent-acompact-70d8e7");

  // A PreToolUse blocking error (parent: the assistant line of the blocked call) goes after the
  // call's result, so the tool_use still meets its result next; that result needs no estimate of
  // the reminder (it is recorded).
  auto b = store_->node("2373fa8a-3112-4e15-b7ee-56e475a08d3e~main");
  ASSERT_TRUE(b);
  auto result = store_->node(*b->predecessor);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->role, role::kTool);
  EXPECT_EQ(result->metadata["source"]["line"], 1358);
  EXPECT_FALSE(result->metadata.contains("hook_blocked"));
}

// A call a PreToolUse hook blocked (PreToolUse hooks ran, no PostToolUse* hook, an "Error: " result)
// is named in metadata.hook_blocked; a failing command (PostToolUseFailure hooks ran) and an Edit
// error without hooks are not.
TEST_F(ClaudeImportTest, CallsBlockedByAPreToolUseHookAreMarked) {
  import(kManual);
  const std::string sid = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
  std::map<std::int64_t, Json> blocked;
  for (const auto& n : spine(sid))
    if (n.metadata.contains("hook_blocked")) blocked[n.metadata["source"]["line"].get<std::int64_t>()] = n.metadata["hook_blocked"];
  std::vector<std::int64_t> lines;
  for (const auto& [l, _] : blocked) lines.push_back(l);
  EXPECT_EQ(lines, (std::vector<std::int64_t>{661, 1209, 1343, 1366, 1389, 1419, 1447, 1463}));
  const Json& h = blocked[1389];
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0]["tool_use_id"], "toolu_01DUw3PsG8cXcMcPaRaQ9HB7");
  EXPECT_EQ(h[0]["hook"], "PreToolUse:Bash");
  EXPECT_EQ(h[0]["commands"].size(), 4u);
  EXPECT_EQ(h[0]["commands"][1], "${CLAUDE_PLUGIN_ROOT}/scripts/pre-commit.sh");
}

TEST_F(ClaudeImportTest, InlineSidechainsBecomeLinkedSessions) {
  auto res = import(kInline);
  const std::string sid = "fe5e1c67-53e7-4862-81ae-d0e013e3270b";
  EXPECT_EQ(session(res, sid)->nodes_added, 23);
  int sidechains = 0;
  std::int64_t side_nodes = 0;
  for (const auto& s : store_->sessions()) {
    if (s.kind != "sidechain") continue;
    ++sidechains;
    EXPECT_EQ(s.parent_session, sid);
    EXPECT_EQ(s.id.rfind(sid + "/sidechain-", 0), 0u);
    ASSERT_TRUE(s.parent_node) << s.id;
    auto task = store_->node(*s.parent_node);
    ASSERT_TRUE(task) << s.id;
    EXPECT_EQ(task->session, sid);
    side_nodes += store_->node_count(s.id);
    expect_spine_balanced(s.id);
  }
  EXPECT_EQ(sidechains, 5);
  EXPECT_EQ(side_nodes, 18 + 68 + 80 + 50 + 106);
  EXPECT_TRUE(store_->session(sid + "/sidechain-6690d10e"));
  // The leading summary line (a title pointing into another file) is kept verbatim.
  EXPECT_EQ(store_->source_record_count(sid), 1);
  EXPECT_TRUE(res.warnings.empty());
  expect_spine_balanced(sid);
}

TEST_F(ClaudeImportTest, AsyncAgentsAndApiErrors) {
  auto res = import(kAsync);
  const std::string sid = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68";
  EXPECT_EQ(session(res, sid)->nodes_added, 47);
  EXPECT_EQ(store_->source_record_count(sid), 25);
  EXPECT_TRUE(res.warnings.empty());
  int agents = 0;
  for (const auto& s : store_->sessions())
    if (s.kind == "sidechain") {
      ++agents;
      EXPECT_TRUE(s.parent_node) << s.id;
      EXPECT_EQ(store_->node_count(s.id), 6) << s.id;
    }
  EXPECT_EQ(agents, 5);
  expect_spine_balanced(sid);
}

TEST_F(ClaudeImportTest, ResumeBranchKeepsBothBranchesAndDuplicatedExchange) {
  auto res = import(kImages);
  const std::string sid = "47bf5f5c-9e11-4f51-8a29-7ad38ecdf17c";
  EXPECT_EQ(session(res, sid)->nodes_added, 14);
  // Lines 12-13 (message ...MLQLgU) merge into afa79e97; it has two user children (lines 14, 17).
  auto kids = store_->children("afa79e97-7961-4b93-804b-1e5696e11f2f");
  EXPECT_EQ(kids, (std::vector<std::string>{"a9f65f98-8946-4219-9999-bd59340567ac",
                                            "c7143558-0017-4d04-b910-bddb90888833"}));
  // The first copy of the exchange (same message.id, other uuids) is its own root, not merged.
  auto first = store_->node("010c00ca-f7a8-438b-afea-79743a2c4a2e");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->metadata["message_id"], store_->node("afa79e97-7961-4b93-804b-1e5696e11f2f")->metadata["message_id"]);
  auto img = store_->node("0c629afe-8d02-4f22-9dd6-c930c7776e1c");
  ASSERT_TRUE(img);
  EXPECT_EQ(img->content[1]["type"], "image");
  EXPECT_GT(img->content[1].value("width", 0), 0);
  EXPECT_EQ(store_->head(sid), "cb89eb5b-b63e-4b86-8801-795b1d033311");
  expect_spine_balanced(sid, 2);  // the file ends with two tool calls still open
}

// ---------------------------------------------------------------------------------------------
// Synthetic fixtures.

Json user(const std::string& uuid, const std::string& parent, const Json& content) {
  Json j = Json::object();
  j["parentUuid"] = parent.empty() ? Json(nullptr) : Json(parent);
  j["isSidechain"] = false;
  j["type"] = "user";
  j["message"] = Json{{"role", "user"}, {"content", content}};
  j["uuid"] = uuid;
  j["timestamp"] = "2026-01-01T00:00:00.000Z";
  j["sessionId"] = "s";
  return j;
}

Json assistant(const std::string& uuid, const std::string& parent, const std::string& msg_id, const Json& block) {
  Json j = Json::object();
  j["parentUuid"] = parent.empty() ? Json(nullptr) : Json(parent);
  j["isSidechain"] = false;
  j["type"] = "assistant";
  j["message"] = Json{{"id", msg_id},
                      {"role", "assistant"},
                      {"model", "m"},
                      {"content", Json::array({block})},
                      {"usage", Json{{"output_tokens", uuid.size()}}}};
  j["uuid"] = uuid;
  j["timestamp"] = "2026-01-01T00:00:01.000Z";
  j["sessionId"] = "s";
  return j;
}

Json text(const std::string& t) { return Json{{"type", "text"}, {"text", t}}; }

Json boundary(const std::string& uuid, const std::string& logical) {
  Json j = Json::object();
  j["parentUuid"] = nullptr;
  j["logicalParentUuid"] = logical;
  j["type"] = "system";
  j["subtype"] = "compact_boundary";
  j["content"] = "Conversation compacted";
  j["compactMetadata"] = Json{{"trigger", "auto"}, {"preTokens", 1000}};
  j["uuid"] = uuid;
  j["sessionId"] = "s";
  return j;
}

Json compact_summary(const std::string& uuid, const std::string& parent, const std::string& t) {
  Json j = user(uuid, parent, t);
  j["isCompactSummary"] = true;
  j["isVisibleInTranscriptOnly"] = true;
  return j;
}

TEST_F(ClaudeImportTest, RepeatedCompactionsCoverTheWholeRawChain) {
  std::string p = write("rep.jsonl", {user("u1", "", "one"), assistant("a1", "u1", "m1", text("r1")),
                                      user("u2", "a1", "two"), assistant("a2", "u2", "m2", text("r2")),
                                      boundary("b1", "a2"), compact_summary("s1", "b1", "summary one"),
                                      user("u3", "s1", "three"), assistant("a3", "u3", "m3", text("r3")),
                                      boundary("b2", "a3"), compact_summary("s2", "b2", "summary two"),
                                      user("u4", "s2", "four")});
  auto res = import(p);
  EXPECT_TRUE(res.warnings.empty());
  EXPECT_EQ(session(res, "rep")->nodes_added, 11);
  auto s1 = store_->node("s1");
  auto s2 = store_->node("s2");
  ASSERT_TRUE(s1 && s2);
  EXPECT_EQ(s1->kind, "summary");
  EXPECT_EQ(s1->covers_ids, (std::vector<std::string>{"u1", "a1", "u2", "a2"}));
  EXPECT_EQ(s2->covers_ids, (std::vector<std::string>{"u1", "a1", "u2", "a2", "b1", "u3", "a3"}));
  EXPECT_FALSE(s2->predecessor);
  EXPECT_EQ(store_->node("u3")->predecessor, "b1");
  EXPECT_EQ(store_->node("u4")->predecessor, "b2");
  EXPECT_EQ(store_->node("u4")->metadata["source_parent"], "s2");
  EXPECT_EQ(store_->node("b2")->predecessor, "a3");
  std::vector<std::string> ids;
  for (const auto& n : spine("rep")) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"u1", "a1", "u2", "a2", "b1", "u3", "a3", "b2", "u4"}));
  EXPECT_EQ(store_->active_summary("rep")->id, "s2");
}

// The record after a compaction boundary names a parent never written (docs/import.md "Bad input,
// by class").
TEST_F(ClaudeImportTest, SummaryWhoseBoundaryWasNeverWritten) {
  std::string p = write("c10.jsonl", {user("u1", "", "one"), assistant("a1", "u1", "m1", text("r1")),
                                      compact_summary("s1", "b-missing", "the summary"), user("u2", "s1", "next"),
                                      assistant("a2", "u2", "m2", text("r2"))});
  auto res = import(p);
  auto c = codes(res);
  EXPECT_EQ(c["parent.missing"], 1);
  EXPECT_EQ(session(res, "c10")->nodes_added, 5);
  auto s = store_->node("s1");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->metadata["missing_predecessor"], "b-missing");
  // Attached to the record written before it, the summary covers what came before and render
  // reaches it and everything after it.
  EXPECT_EQ(s->kind, "summary");
  EXPECT_EQ(store_->covers_of(s->seq), (std::vector<std::string>{"u1", "a1"}));
  EXPECT_EQ(store_->active_summary("c10")->id, "s1");
  std::vector<std::string> ids;
  for (const auto& n : spine("c10")) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"u1", "a1", "u2", "a2"}));
  EXPECT_EQ(store_->node_count("c10"), 5);  // nothing dropped
}

// The other way round: the summary is written but the record after it names a parent that
// is not. The render must still reach the summary and what follows it.
TEST_F(ClaudeImportTest, RecordAfterSummaryNamesMissingParent) {
  std::string p = write("c10c.jsonl", {user("u1", "", "one"), assistant("a1", "u1", "m1", text("r1")),
                                       boundary("b1", "a1"), compact_summary("s1", "b1", "the summary"),
                                       user("u2", "ghost", "next"), assistant("a2", "u2", "m2", text("r2"))});
  auto res = import(p);
  EXPECT_EQ(codes(res)["parent.missing"], 1);
  EXPECT_EQ(store_->node("u2")->metadata["missing_predecessor"], "ghost");
  auto s = store_->active_summary("c10c");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->id, "s1");
  std::vector<std::string> ids;
  for (const auto& n : spine("c10c")) ids.push_back(n.id);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[ids.size() - 2], "u2");
  EXPECT_EQ(ids.back(), "a2");
  EXPECT_NE(std::find(ids.begin(), ids.end(), "a1"), ids.end());  // u2's chain runs through the summarised turns
  EXPECT_EQ(store_->head("c10c"), "a2");
}

// The first record of a file (an excerpt) naming a parent outside it stays a root.
TEST_F(ClaudeImportTest, MissingParentOfFirstRecordStaysARoot) {
  auto res = import(write("excerpt.jsonl", {user("u1", "outside", "one"), assistant("a1", "u1", "m1", text("r1"))}));
  EXPECT_EQ(codes(res)["parent.missing"], 1);
  EXPECT_FALSE(store_->node("u1")->predecessor);
  EXPECT_EQ(store_->node("u1")->metadata["missing_predecessor"], "outside");
}

TEST_F(ClaudeImportTest, BoundaryWhoseLogicalParentWasNeverWritten) {
  std::string p = write("c10b.jsonl", {user("u1", "", "one"), boundary("b1", "ghost"),
                                       compact_summary("s1", "b1", "the summary"), user("u2", "s1", "next")});
  auto res = import(p);
  auto c = codes(res);
  EXPECT_EQ(c["parent.missing"], 1);
  EXPECT_EQ(store_->node("b1")->metadata["missing_predecessor"], "ghost");
  EXPECT_EQ(store_->node("s1")->kind, "summary");
  std::vector<std::string> ids;
  for (const auto& n : spine("c10b")) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"u1", "b1", "u2"}));
  EXPECT_EQ(store_->active_summary("c10b")->id, "s1");
}

// Twenty records written twice with the same ids and payloads.
TEST_F(ClaudeImportTest, IdenticalDuplicatesAreCountedOnce) {
  std::vector<Json> recs;
  std::string prev;
  for (int i = 0; i < 20; ++i) {
    std::string id = "n" + std::to_string(i);
    recs.push_back(i % 2 == 0 ? user(id, prev, "q" + std::to_string(i))
                              : assistant(id, prev, "m" + std::to_string(i), text("a" + std::to_string(i))));
    prev = id;
  }
  std::vector<Json> twice = recs;
  twice.insert(twice.end(), recs.begin(), recs.end());
  twice.push_back(user("tail", prev, "end"));
  auto res = import(write("c11.jsonl", twice));
  EXPECT_EQ(codes(res)["id.duplicate"], 20);
  EXPECT_EQ(session(res, "c11")->nodes_added, 21);
  EXPECT_EQ(store_->node_count("c11"), 21);
  EXPECT_EQ(spine("c11").size(), 21u);
  EXPECT_EQ(store_->head("c11"), "tail");
}

// A NUL line between two runs of valid records.
TEST_F(ClaudeImportTest, NulLineKeepsAllRecords) {
  std::string bytes;
  std::string prev;
  for (int i = 0; i < 200; ++i) {
    if (i == 100) bytes += std::string(500, '\0') + "\n";
    std::string id = "n" + std::to_string(i);
    bytes += dump_json(user(id, prev, "line " + std::to_string(i))) + "\n";
    prev = id;
  }
  auto res = import(write_raw("c21.jsonl", bytes));
  EXPECT_EQ(session(res, "c21")->nodes_added, 200);
  ASSERT_EQ(res.warnings.size(), 1u);
  EXPECT_EQ(res.warnings[0].code, "line.nul");
  EXPECT_EQ(res.warnings[0].line, 101);
  EXPECT_EQ(spine("c21").size(), 200u);
}

// Two records glued on one line, later records parented to the second.
TEST_F(ClaudeImportTest, GluedRecordsKeepTheChain) {
  std::string bytes = dump_json(user("u1", "", "a } { \" tricky")) + "\n" +
                      dump_json(assistant("a1", "u1", "m1", text("x\"}{"))) +
                      dump_json(user("u2", "a1", "second of the glued pair")) + "\n" +
                      dump_json(assistant("a2", "u2", "m2", text("after"))) + "\n";
  auto res = import(write_raw("c22.jsonl", bytes));
  EXPECT_EQ(codes(res)["line.glued"], 1);
  EXPECT_EQ(session(res, "c22")->nodes_added, 4);
  std::vector<std::string> ids;
  for (const auto& n : spine("c22")) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"u1", "a1", "u2", "a2"}));
  EXPECT_EQ(store_->node("u2")->metadata["source"]["line"], 2);
  EXPECT_EQ(store_->node("u2")->metadata["source"]["part"], 1);
  EXPECT_EQ(store_->node("a1")->content[0]["text"], "x\"}{");
  // Re-import of the glued file is idempotent too.
  auto again = import(write_raw("c22.jsonl", bytes));
  EXPECT_EQ(added(again), 0);
}

// Parent links that loop: a, b(a), then a record with id a whose parent is b.
TEST_F(ClaudeImportTest, ParentCycleTerminatesAndIsReported) {
  std::string p = write("c23.jsonl", {user("a", "", "first a"), assistant("b", "a", "m1", text("b")),
                                      user("a", "b", "a again, now under b"), user("c", "b", "after")});
  auto res = import(p);
  auto c = codes(res);
  EXPECT_EQ(c["cycle"], 1);
  bool named = false;
  for (const auto& w : res.warnings)
    if (w.code == "cycle") {
      named = w.message.find("a -> b -> a") != std::string::npos;
      EXPECT_EQ(w.line, 3);
    }
  EXPECT_TRUE(named);
  EXPECT_EQ(c["id.duplicate_conflict"], 1);
  EXPECT_EQ(store_->node_count("c23"), 4);
  EXPECT_EQ(store_->node("c")->predecessor, "b");
  EXPECT_EQ(store_->node("b")->predecessor, "a");
}

// The loop exactly (the three records): the rewrite of a is stored under a new id and keeps its
// parent b, so HEAD (the rewrite) renders all three messages; the warning names the file and the
// line.
TEST_F(ClaudeImportTest, DuplicateIdKeepsItsParentAndTheChain) {
  std::string p = write("c23x.jsonl", {user("a", "", "first a"), assistant("b", "a", "m1", text("b")),
                                       user("a", "b", "a again, now under b")});
  auto res = import(p);
  std::optional<ImportWarning> cyc;
  for (const auto& w : res.warnings)
    if (w.code == "cycle") cyc = w;
  ASSERT_TRUE(cyc);
  EXPECT_EQ(cyc->file, p);
  EXPECT_EQ(cyc->line, 3);
  EXPECT_NE(cyc->message.find("a -> b -> a"), std::string::npos) << cyc->message;
  EXPECT_NE(cyc->message.find("line 1"), std::string::npos) << cyc->message;
  auto head = store_->head("c23x");
  ASSERT_TRUE(head);
  EXPECT_NE(*head, "a");
  EXPECT_EQ(store_->node(*head)->predecessor, "b");
  EXPECT_EQ(store_->node(*head)->metadata["duplicate_of"], "a");
  std::vector<std::string> ids;
  for (const auto& n : spine("c23x")) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "b", *head}));
  EXPECT_EQ(render_context(*store_, "c23x", {}).items.size(), 3u);
}

TEST_F(ClaudeImportTest, PureCycleIsBrokenAtItsEarliestRecord) {
  std::string p = write("loop.jsonl", {user("x", "y", "x"), assistant("y", "x", "m1", text("y")),
                                       user("z", "y", "z"), user("self", "self", "me")});
  auto res = import(p);
  EXPECT_EQ(codes(res)["cycle"], 2);
  EXPECT_EQ(store_->node_count("loop"), 4);
  EXPECT_FALSE(store_->node("x")->predecessor);
  EXPECT_EQ(store_->node("x")->metadata["source_parent"], "y");
  EXPECT_EQ(store_->node("y")->predecessor, "x");
  EXPECT_FALSE(store_->node("self")->predecessor);
}

// The last line is cut off mid-object without a newline.
TEST_F(ClaudeImportTest, TruncatedLastLineIsAWarning) {
  std::string bytes = dump_json(user("u1", "", "hi")) + "\n" + dump_json(assistant("a1", "u1", "m1", text("yo"))) +
                      "\n" + dump_json(user("u2", "a1", "cut")).substr(0, 40);
  auto res = import(write_raw("c24.jsonl", bytes));
  ASSERT_EQ(res.warnings.size(), 1u);
  EXPECT_EQ(res.warnings[0].code, "line.truncated");
  EXPECT_EQ(res.warnings[0].line, 3);
  EXPECT_EQ(session(res, "c24")->nodes_added, 2);
  EXPECT_EQ(store_->source_record_count("c24"), 1);  // the fragment, verbatim
  EXPECT_EQ(store_->head("c24"), "a1");
}

// A cut-off last line, then the agent wrote again: the next record is glued onto the fragment. It
// is imported.
TEST_F(ClaudeImportTest, RecordWrittenAfterTheFragmentIsImported) {
  std::string bytes = dump_json(user("u1", "", "hi")) + "\n" + dump_json(assistant("a1", "u1", "m1", text("yo"))) +
                      "\n" + dump_json(user("u2", "a1", "cut")).substr(0, 40) +
                      dump_json(user("u3", "a1", "again")) + "\n";
  auto res = import(write_raw("c24b.jsonl", bytes));
  EXPECT_EQ(codes(res)["line.fragment"], 1);
  EXPECT_EQ(session(res, "c24b")->nodes_added, 3);
  EXPECT_EQ(store_->source_record_count("c24b"), 1);  // only the fragment is verbatim
  EXPECT_EQ(store_->head("c24b"), "u3");
}

TEST_F(ClaudeImportTest, InvalidUtf8IsSanitizedAndFlagged) {
  std::string bytes = dump_json(user("u1", "", "PLACEHOLDER")) + "\n";
  bytes.replace(bytes.find("PLACEHOLDER"), 11, "bad \xC0\xAF byte");
  auto res = import(write_raw("utf8.jsonl", bytes));
  EXPECT_EQ(codes(res)["utf8.invalid"], 1);
  auto n = store_->node("u1");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->content[0]["text"], "bad \xEF\xBF\xBD\xEF\xBF\xBD byte");
}

// Node's JSON.stringify writes a string cut inside a surrogate pair as a lone "\ud800" escape,
// which nlohmann::json refuses: the line was dropped as line.malformed and the next record
// re-parented. It is read with U+FFFD instead, flagged with its line, and the chain holds.
TEST_F(ClaudeImportTest, LoneSurrogateEscapeKeepsTheMessageAndTheChain) {
  std::string bytes = dump_json(user("u1", "", "first")) + "\n" +
                      dump_json(assistant("a1", "u1", "m1", text("ok"))) + "\n" +
                      dump_json(user("u2", "a1", "PLACEHOLDER")) + "\n" +
                      dump_json(assistant("a2", "u2", "m2", text("after"))) + "\n";
  bytes.replace(bytes.find("PLACEHOLDER"), 11, "escaped lone surrogate \\ud800 here");
  auto res = import(write_raw("lone.jsonl", bytes));
  auto c = codes(res);
  EXPECT_EQ(c["line.malformed"], 0);
  ASSERT_EQ(c["json.lone_surrogate"], 1);
  for (const auto& w : res.warnings)
    if (w.code == "json.lone_surrogate") {
      EXPECT_EQ(w.line, 3);
      EXPECT_NE(w.file.find("lone.jsonl"), std::string::npos);
    }
  EXPECT_EQ(session(res, "lone")->nodes_added, 4);
  std::vector<std::string> ids;
  for (const auto& n : spine("lone")) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"u1", "a1", "u2", "a2"}));
  auto n = store_->node("u2");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->content[0]["text"], "escaped lone surrogate \xEF\xBF\xBD here");
  EXPECT_EQ(added(import(write_raw("lone.jsonl", bytes))), 0);  // re-import adds nothing
}

TEST_F(ClaudeImportTest, ImagesGetDimensionsOrAnUndecodableWarning) {
  // 1x1 PNG.
  const std::string png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
  Json ok = Json{{"type", "image"}, {"source", Json{{"type", "base64"}, {"media_type", "image/png"}, {"data", png}}}};
  Json empty = Json{{"type", "image"}, {"source", Json{{"type", "base64"}, {"media_type", "image/png"}, {"data", ""}}}};
  Json url = Json{{"type", "image"}, {"source", Json{{"type", "url"}, {"url", "https://example.com/x.png"}}}};
  auto res = import(write("img.jsonl", {user("u1", "", Json::array({text("look"), ok, empty, url}))}));
  EXPECT_EQ(codes(res)["image.undecodable"], 1);
  auto n = store_->node("u1");
  ASSERT_TRUE(n);
  ASSERT_EQ(n->content.size(), 4u);
  EXPECT_EQ(n->content[1]["width"], 1);
  EXPECT_EQ(n->content[1]["height"], 1);
  EXPECT_EQ(n->content[1]["data"], png);
  EXPECT_EQ(n->content[2]["type"], "image");
  EXPECT_EQ(n->content[2]["data"], "");
  EXPECT_EQ(n->content[3]["ref"], "https://example.com/x.png");
}

TEST_F(ClaudeImportTest, StreamedMessageInterleavedWithToolResultsIsOneNode) {
  // As in agent-aac57f5 lines 21-39: tools run while the message streams.
  auto tu = [](const std::string& id) {
    return Json{{"type", "tool_use"}, {"id", id}, {"name", "Read"}, {"input", Json::object()}};
  };
  auto tr = [](const std::string& id) {
    return Json::array({Json{{"type", "tool_result"}, {"tool_use_id", id}, {"content", "ok"}}});
  };
  std::string p = write("stream.jsonl", {user("u", "", "go"), assistant("a1", "u", "M", tu("t1")),
                                         assistant("a2", "a1", "M", tu("t2")), user("r1", "a1", tr("t1")),
                                         assistant("a3", "r1", "M", tu("t3")), user("r2", "a2", tr("t2")),
                                         user("r3", "a3", tr("t3")), assistant("z", "r3", "N", text("done"))});
  auto res = import(p);
  EXPECT_TRUE(res.warnings.empty());
  EXPECT_EQ(session(res, "stream")->nodes_added, 6);
  auto a = store_->node("a1");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->content.size(), 3u);
  std::vector<std::string> ids;
  for (const auto& n : spine("stream")) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"u", "a1", "r1", "r2", "r3", "z"}));
  expect_spine_balanced("stream");
}

TEST_F(ClaudeImportTest, RecordsWithoutUuidAreKeptVerbatim) {
  std::string title = R"({"type":"summary","summary":"A title","leafUuid":"elsewhere"})";
  std::string snap = R"({"type":"file-history-snapshot","messageId":"u1","snapshot":{},"isSnapshotUpdate":false})";
  std::string bytes = title + "\n" + dump_json(user("u1", "", "hi")) + "\n" + snap + "\n";
  auto res = import(write_raw("keep.jsonl", bytes));
  EXPECT_TRUE(res.warnings.empty());
  EXPECT_EQ(store_->source_record_count("keep"), 2);
  auto st = store_->db().prepare("SELECT type, raw FROM source_records WHERE session='keep' ORDER BY line");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "summary");
  EXPECT_EQ(st.text(1), title);
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "file-history-snapshot");
  EXPECT_EQ(st.text(1), snap);
}

TEST_F(ClaudeImportTest, SubagentFilesAreListedAndLinkedByAgentId) {
  auto tu = Json{{"type", "tool_use"}, {"id", "toolu_T"}, {"name", "Task"}, {"input", Json{{"prompt", "do it"}}}};
  Json result = user("r", "a", Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "toolu_T"}, {"content", "done"}}}));
  result["toolUseResult"] = Json{{"status", "completed"}, {"agentId", "abc1234"}};
  std::string main = write("proj/main1.jsonl", {user("u", "", "go"), assistant("a", "u", "M", tu), result});
  Json s1 = user("x1", "", "do it");
  s1["isSidechain"] = true;
  s1["agentId"] = "abc1234";
  Json s2 = assistant("x2", "x1", "S", text("did it"));
  s2["isSidechain"] = true;
  s2["agentId"] = "abc1234";
  write("proj/main1/subagents/agent-abc1234.jsonl", {s1, s2});
  auto files = claude_code_subagent_files(main);
  ASSERT_EQ(files.size(), 1u);
  auto res = import(main);
  auto info = store_->session("main1/agent-abc1234");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kind, "sidechain");
  EXPECT_EQ(info->parent_session, "main1");
  EXPECT_EQ(info->parent_node, "a");
  EXPECT_EQ(store_->node_count("main1/agent-abc1234"), 2);
  EXPECT_EQ(store_->head("main1/agent-abc1234"), "x2");
  EXPECT_EQ(store_->head("main1"), "r");
}

}  // namespace
}  // namespace ctxfold
