// The opencode / Kilo CLI importer (docs/formats/opencode.md) on a store shaped like the ones
// opencode 1.18.33 and Kilo CLI 7.7.7 wrote in the conformance suite (tests/clients/opencode/):
// the tables are created and filled here, with a turn of tool calls over two model steps, a
// sub-agent session, a compaction and a turn after it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "forensics/usage.hpp"
#include "import/import.hpp"
#include "import/opencode.hpp"
#include "session/open.hpp"
#include "store/db.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

/// An agent store with the tables the importer reads and one migration row.
class AgentStore {
 public:
  AgentStore(const std::string& path, const std::string& migration) : db_(path, false) {
    db_.exec(
        "CREATE TABLE migration (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);"
        "CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,"
        " directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL);"
        "CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,"
        " data text NOT NULL);"
        "CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,"
        " data text NOT NULL);");
    db_.prepare("INSERT INTO migration VALUES (?1, 1)").bind(1, migration).run();
  }
  void session(const std::string& id, const std::string& parent, std::int64_t created) {
    Stmt q = db_.prepare("INSERT INTO session VALUES (?1, 'global', ?2, 's', '/p', 'title', 'v', ?3)");
    q.bind(1, id).bind(3, created);
    if (parent.empty()) q.bind_null(2);
    else q.bind(2, parent);
    q.run();
  }
  void message(const std::string& id, const std::string& session, const std::string& data) {
    db_.prepare("INSERT INTO message VALUES (?1, ?2, 1, ?3)").bind(1, id).bind(2, session).bind(3, data).run();
  }
  void part(const std::string& id, const std::string& message, const std::string& session, const std::string& data) {
    db_.prepare("INSERT INTO part VALUES (?1, ?2, ?3, ?4)").bind(1, id).bind(2, message).bind(3, session).bind(4, data).run();
  }
  /// The event log as opencode 1.18.33 keeps it (one row per sync event of a session).
  void event(const std::string& session, std::int64_t seq, const std::string& type, const std::string& data) {
    db_.exec("CREATE TABLE IF NOT EXISTS event (id text PRIMARY KEY, aggregate_id text NOT NULL, seq integer NOT NULL,"
             " type text NOT NULL, data text NOT NULL)");
    db_.prepare("INSERT INTO event VALUES (?1, ?2, ?3, ?4, ?5)")
        .bind(1, "evt_" + std::to_string(seq)).bind(2, session).bind(3, seq).bind(4, type).bind(5, data).run();
  }

 private:
  Db db_;
};

constexpr const char* kOpencodeVersion = "20260622202450_simplify_session_input";

void fill(AgentStore& s) {
  s.session("ses_1", "", 1);
  s.session("ses_2", "ses_1", 2);
  s.message("msg_01", "ses_1", R"({"role":"user","time":{"created":1796495564476}})");
  s.part("prt_01", "msg_01", "ses_1", R"({"type":"text","text":"PROMPT one"})");
  s.part("prt_02", "msg_01", "ses_1", R"({"type":"text","text":"not sent","ignored":true})");
  s.message("msg_02", "ses_1",
            R"({"role":"assistant","modelID":"m","tokens":{"input":10,"output":3,"reasoning":2,"cache":{"read":5,"write":1}}})");
  s.part("prt_03", "msg_02", "ses_1", R"({"type":"step-start"})");
  s.part("prt_04", "msg_02", "ses_1", R"({"type":"reasoning","text":"thinking"})");
  s.part("prt_05", "msg_02", "ses_1",
         R"({"type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"output":"a\n"}})");
  s.part("prt_06", "msg_02", "ses_1",
         R"({"type":"tool","tool":"task","callID":"c2","state":{"status":"completed","input":{},"output":"ok","metadata":{"sessionId":"ses_2"}}})");
  s.part("prt_07", "msg_02", "ses_1", R"({"type":"step-finish"})");
  s.part("prt_08", "msg_02", "ses_1", R"({"type":"step-start"})");
  s.part("prt_09", "msg_02", "ses_1",
         R"({"type":"tool","tool":"read","callID":"c3","state":{"status":"running","input":{"filePath":"/p/a"}}})");
  s.part("prt_10", "msg_02", "ses_1",
         R"({"type":"tool","tool":"read","callID":"c4","state":{"status":"completed","input":{},"output":"big","time":{"compacted":5}}})");
  s.message("msg_03", "ses_2", R"({"role":"user"})");
  s.part("prt_11", "msg_03", "ses_2", R"({"type":"text","text":"SUB"})");
  s.message("msg_04", "ses_1", R"({"role":"user"})");
  s.part("prt_12", "msg_04", "ses_1", R"({"type":"compaction","auto":true})");
  s.message("msg_05", "ses_1", R"({"role":"assistant","summary":true})");
  s.part("prt_13", "msg_05", "ses_1", R"({"type":"text","text":"SUMMARY"})");
  s.message("msg_06", "ses_1", R"({"role":"user"})");
  s.part("prt_14", "msg_06", "ses_1", R"({"type":"text","text":"PROMPT two"})");
}

struct OpencodeFixture {
  TempDir dir;
  Store store = open_store(dir.path("c.db"), Store::Mode::read_write);
  ImportResult import(const std::string& path) { return import_paths(store, {path}, ImportOptions{}); }
};

TEST(OpencodeImport, DetectedBySchemaAndVersion) {
  OpencodeFixture f;
  { AgentStore s(f.dir.path("a.bin"), kOpencodeVersion); }
  { AgentStore s(f.dir.path("k.db"), "20260907102000_kilocode_model_usage_index"); }
  { AgentStore s(f.dir.path("new.db"), "20990101000000_later"); }
  EXPECT_EQ(detect_format(f.dir.path("a.bin")), "opencode");
  EXPECT_EQ(detect_format(f.dir.path("k.db")), "kilo");
  try {
    detect_format(f.dir.path("new.db"));
    ADD_FAILURE() << "a newer schema was claimed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "import.unknown_version");
    EXPECT_NE(std::string(e.what()).find("20990101000000_later"), std::string::npos);
  }
  EXPECT_FALSE(opencode_store_format(f.dir.path("c.db")));  // a ctxfold database is not a store
}

TEST(OpencodeImport, ToolPartsStepsSidechainAndCompaction) {
  OpencodeFixture f;
  const std::string path = f.dir.path("opencode.db");
  {
    AgentStore s(path, kOpencodeVersion);
    fill(s);
  }
  ImportResult r = f.import(path);
  ASSERT_EQ(r.sessions.size(), 2u);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front().code;
  auto u1 = f.store.node("msg_01", false);
  ASSERT_TRUE(u1);
  EXPECT_EQ(u1->content.size(), 1u);  // the ignored part is not sent
  // Two model steps: msg_02 (thinking, two calls) + its tools, msg_02.1 (two calls) + its tools.
  auto a = f.store.node("msg_02", false);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->content[0]["type"], "thinking");
  EXPECT_EQ(a->content[1]["id"], "c1");
  EXPECT_FALSE(a->metadata.contains("usage"));  // on the message's last node
  auto t = f.store.node("msg_02/tools", false);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->predecessor.value_or(""), "msg_02");
  EXPECT_EQ(t->content[0]["content"], "a\n");
  auto t2 = f.store.node("msg_02.1/tools", false);
  ASSERT_TRUE(t2);
  EXPECT_EQ(t2->content[0]["content"], "[Tool execution was interrupted]");
  EXPECT_EQ(t2->content[0]["is_error"], true);
  EXPECT_EQ(t2->content[1]["content"], "[Old tool result content cleared]");
  auto a2 = f.store.node("msg_02.1", false);
  ASSERT_TRUE(a2);
  UsageTokens u = normalize_usage("opencode", a2->metadata["usage"]);
  EXPECT_EQ(u.input, 10);
  EXPECT_EQ(u.cache_read, 5);
  EXPECT_EQ(u.cache_write_5m, 1);
  EXPECT_EQ(u.output, 5);
  EXPECT_EQ(u.reasoning, 2);
  // The task call's child session is a sidechain launched from the node holding the call.
  auto child = f.store.session("ses_2");
  ASSERT_TRUE(child);
  EXPECT_EQ(child->kind, "sidechain");
  EXPECT_EQ(child->parent_node.value_or(""), "msg_02");
  // The compaction and its summary: one summary view node, the chain going on from the last covered.
  auto sum = f.store.node("msg_05", false);
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->kind, "summary");
  EXPECT_EQ(f.store.covers_of(sum->seq),
            (std::vector<std::string>{"msg_01", "msg_02", "msg_02/tools", "msg_02.1", "msg_02.1/tools"}));
  EXPECT_EQ(sum->content[0]["text"], "What did we do so far?");
  EXPECT_EQ(sum->content[1]["text"], "SUMMARY");
  EXPECT_EQ(sum->metadata["trigger"], "auto");
  EXPECT_FALSE(f.store.node("msg_04", false));
  auto u2 = f.store.node("msg_06", false);
  ASSERT_TRUE(u2);
  EXPECT_EQ(u2->predecessor.value_or(""), "msg_02.1/tools");
  EXPECT_EQ(f.store.head("ses_1").value_or(""), "msg_06");
  EXPECT_EQ(f.import(path).sessions[0].nodes_added, 0);  // again: nothing new
}

// A revert then a new prompt deletes the reverted messages' rows; the event log still holds them
// (docs/formats/opencode.md "The event log"): they come back as a branch off where they began.
TEST(OpencodeImport, RemovedMessagesFromTheEventLogAreABranch) {
  OpencodeFixture f;
  const std::string path = f.dir.path("opencode.db");
  {
    AgentStore s(path, kOpencodeVersion);
    s.session("ses_1", "", 1);
    s.message("msg_01", "ses_1", R"({"role":"user"})");
    s.part("prt_01", "msg_01", "ses_1", R"({"type":"text","text":"PROMPT one"})");
    s.message("msg_02", "ses_1", R"({"role":"assistant"})");
    s.part("prt_02", "msg_02", "ses_1", R"({"type":"text","text":"one"})");
    s.message("msg_05", "ses_1", R"({"role":"user"})");
    s.part("prt_05", "msg_05", "ses_1", R"({"type":"text","text":"PROMPT again"})");
    s.event("ses_1", 0, "message.updated.1", R"({"sessionID":"ses_1","info":{"id":"msg_03","sessionID":"ses_1","role":"user"}})");
    s.event("ses_1", 1, "message.part.updated.1",
            R"({"sessionID":"ses_1","part":{"id":"prt_03","messageID":"msg_03","sessionID":"ses_1","type":"text","text":"PROMPT reverted"}})");
    s.event("ses_1", 2, "message.updated.1",
            R"({"sessionID":"ses_1","info":{"id":"msg_04","sessionID":"ses_1","role":"assistant","modelID":"m"}})");
    s.event("ses_1", 3, "message.part.updated.1",
            R"({"sessionID":"ses_1","part":{"id":"prt_04","messageID":"msg_04","sessionID":"ses_1","type":"text","text":"draft"}})");
    s.event("ses_1", 4, "message.part.updated.1",
            R"({"sessionID":"ses_1","part":{"id":"prt_04","messageID":"msg_04","sessionID":"ses_1","type":"text","text":"reverted answer"}})");
    s.event("ses_1", 5, "message.removed.1", R"({"sessionID":"ses_1","messageID":"msg_04"})");
    s.event("ses_1", 6, "message.removed.1", R"({"sessionID":"ses_1","messageID":"msg_03"})");
  }
  ImportResult r = f.import(path);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.sessions[0].nodes_added, 5);
  auto u3 = f.store.node("msg_03", false), a4 = f.store.node("msg_04", false), u5 = f.store.node("msg_05", false);
  ASSERT_TRUE(u3 && a4 && u5);
  EXPECT_EQ(u3->content[0]["text"], "PROMPT reverted");
  EXPECT_EQ(a4->content[0]["text"], "reverted answer");  // the part's last state
  EXPECT_EQ(a4->metadata["source"]["table"], "event");
  EXPECT_EQ(a4->metadata["removed"], true);
  EXPECT_EQ(u3->predecessor.value_or(""), "msg_02");
  EXPECT_EQ(u5->predecessor.value_or(""), "msg_02");  // the branch point, not the removed reply
  EXPECT_EQ(f.store.head("ses_1").value_or(""), "msg_05");
  EXPECT_EQ(f.import(path).sessions[0].nodes_added, 0);
}

TEST(OpencodeImport, EmptyMessageWarnsWithTableAndRow) {
  OpencodeFixture f;
  const std::string path = f.dir.path("opencode.db");
  {
    AgentStore s(path, kOpencodeVersion);
    s.session("ses_1", "", 1);
    s.message("msg_01", "ses_1", R"({"role":"user"})");
    s.part("prt_01", "msg_01", "ses_1", R"({"type":"text","text":"hi"})");
    s.message("msg_02", "ses_1", R"({"role":"assistant"})");
    s.part("prt_02", "msg_02", "ses_1", R"({"type":"step-start"})");
  }
  ImportResult r = f.import(path);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code, "node.empty");
  EXPECT_EQ(r.warnings[0].line, 2);
  EXPECT_NE(r.warnings[0].message.find("table message, row 2"), std::string::npos) << r.warnings[0].message;
}

}  // namespace
}  // namespace ctxfold
