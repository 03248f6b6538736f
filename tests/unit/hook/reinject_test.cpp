// The hook's path over a small Claude Code transcript: imported incrementally, and the context
// re-injected after a compaction names what the summary dropped, within its bound.
#include "hook/reinject.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../temp_dir.hpp"
#include "hook/archive.hpp"
#include "session/open.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {
namespace {

Json record(const std::string& type, const std::string& uuid, const std::string& parent, const Json& content) {
  Json j = Json::object();
  j["parentUuid"] = parent.empty() ? Json(nullptr) : Json(parent);
  j["isSidechain"] = false;
  j["type"] = type;
  j["message"] = Json{{"role", type}, {"content", content}};
  if (type == "assistant") j["message"]["id"] = "m-" + uuid;
  j["uuid"] = uuid;
  j["timestamp"] = "2026-01-01T00:00:00.000Z";
  j["sessionId"] = "sess";
  return j;
}
Json text(const std::string& t) { return Json::array({Json{{"type", "text"}, {"text", t}}}); }

Json boundary(const std::string& uuid, const std::string& logical) {
  return Json{{"parentUuid", nullptr}, {"logicalParentUuid", logical}, {"type", "system"},
              {"subtype", "compact_boundary"}, {"content", "Conversation compacted"},
              {"compactMetadata", {{"trigger", "manual"}, {"preTokens", 900}}}, {"uuid", uuid}, {"sessionId", "sess"}};
}

class HookPath : public ::testing::Test {
 protected:
  TempDir dir{"hook-path"};
  std::string transcript = dir.path("sess.jsonl");
  Store store = open_store(dir.path("a.db"), Store::Mode::read_write);

  void append(const std::vector<Json>& records, const std::string& tail = "") {
    std::ofstream out(transcript, std::ios::binary | std::ios::app);
    for (const Json& r : records) out << dump_json(r) << "\n";
    out << tail;
  }
  /// One hook call; Stop stores the open turn too, the other events hold it back.
  HookArchive hook(const std::string& event = "Stop") {
    HookPayload p{event, "sess", transcript, "/p", event == "PreCompact" ? "manual" : ""};
    return archive_transcript(store, p, "claude-code");
  }
  std::vector<Json> before() {
    return {record("user", "u1", "", text("please fix src/parser.cpp, it fails")),
            record("assistant", "a1", "u1", text("Running make: error: expected ';' in src/parser.cpp:42")),
            record("user", "u2", "a1", text("also see docs/grammar.md and https://example.org/spec")),
            record("assistant", "a2", "u2", text("Done."))};
  }
};

TEST_F(HookPath, ImportsIncrementallyAndIdempotently) {
  append(before());
  HookArchive a = hook();
  EXPECT_EQ(a.session, "sess");
  EXPECT_EQ(a.outcome, "new");
  EXPECT_EQ(a.nodes_added, 4);
  a = hook();
  EXPECT_EQ(a.outcome, "unchanged");
  EXPECT_EQ(a.nodes_added, 0);
  // A record still being written: its cut line is left for the next call, never glued.
  const std::string next = dump_json(record("user", "u3", "a2", text("next step")));
  append({}, next.substr(0, next.size() / 2));
  a = hook();
  EXPECT_EQ(a.nodes_added, 0);
  append({}, next.substr(next.size() / 2) + "\n");
  // The whole line is a prompt after the last reply: it waits for its reply (attachments written
  // after it would fold into it).
  a = hook();
  EXPECT_EQ(a.nodes_added, 0);
  append({record("assistant", "a3", "u3", text("On it."))});
  a = hook();
  EXPECT_EQ(a.outcome, "appended");
  EXPECT_EQ(a.nodes_added, 2);
  EXPECT_EQ(store.node("u3")->predecessor, "a2");
}

// docs/formats/claude-code.md "Read while it is written": before Stop, the open turn (the last
// reply and what follows it) waits for the next call; what is stored is what one import stores.
TEST_F(HookPath, TheOpenTurnWaitsForTheNextCall) {
  append(before());
  HookArchive a = hook("PreCompact");
  EXPECT_EQ(a.nodes_added, 3);
  EXPECT_FALSE(store.node("a2", false));
  // The reply streams on: a second line of the same message joins its node.
  Json more = record("assistant", "a2b", "a2", text("Also fixed the test."));
  more["message"]["id"] = "m-a2";
  append({more});
  a = hook("PreCompact");
  EXPECT_EQ(a.nodes_added, 0);
  a = hook("Stop");
  EXPECT_EQ(a.nodes_added, 1);
  ASSERT_TRUE(store.node("a2", false));
  EXPECT_EQ(store.node("a2")->content.size(), 2u);
  EXPECT_FALSE(store.node("a2b", false));
  a = hook("Stop");
  EXPECT_EQ(a.outcome, "unchanged");
}

TEST_F(HookPath, AMissingTranscriptWritesNothing) {
  const std::int64_t seq = store.max_seq();
  HookPayload p{"PreCompact", "sess", dir.path("nope.jsonl"), "/p", "manual"};
  EXPECT_THROW(archive_transcript(store, p, "claude-code"), Error);
  EXPECT_EQ(store.max_seq(), seq);
}

TEST_F(HookPath, AfterTheSummaryIsWrittenItsDroppedIdentifiersAreListed) {
  std::vector<Json> all = before();
  all.push_back(boundary("b1", "a2"));
  Json summary = record("user", "s1", "b1", "Summary: the user asked to fix src/parser.cpp.");
  summary["isCompactSummary"] = true;
  all.push_back(summary);
  append(all);
  hook("PreCompact");
  // The summary is held back until the next reply: attachments written after it would fold into it.
  EXPECT_FALSE(store.node("s1", false));
  append({record("assistant", "a3", "s1", text("Continuing."))});
  hook("PreCompact");
  ReinjectOptions o;
  o.db = "/arch/a.db";
  o.just_compacted = true;
  Reinjected r = reinject_context(store, "sess", o);
  EXPECT_EQ(r.basis, "dropped");
  EXPECT_EQ(r.summary_id, "s1");
  EXPECT_EQ(r.shown, r.identifiers);
  EXPECT_NE(r.text.find("- path docs/grammar.md: ctxfold --db /arch/a.db --session sess grep -- docs/grammar.md\n"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("- url https://example.org/spec"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("expand s1"), std::string::npos);
  // The summary keeps src/parser.cpp: not listed.
  EXPECT_EQ(r.text.find("- path src/parser.cpp"), std::string::npos) << r.text;
  // One of each kind in turn: a path, then a command or an error.
  EXPECT_LT(r.text.find("- path "), r.text.find("- error "));
}

TEST_F(HookPath, BeforeTheSummaryIsWrittenTheCompactedHistoryIsListed) {
  append(before());
  hook();
  ReinjectOptions o;
  o.db = "/arch/a.db";
  o.just_compacted = true;
  Reinjected r = reinject_context(store, "sess", o);
  EXPECT_EQ(r.basis, "compacted");
  EXPECT_FALSE(r.summary_id);
  EXPECT_NE(r.text.find("- path src/parser.cpp"), std::string::npos) << r.text;
  // On resume with no compaction there is nothing to say.
  o.just_compacted = false;
  EXPECT_EQ(reinject_context(store, "sess", o).basis, "none");
  EXPECT_TRUE(reinject_context(store, "sess", o).text.empty());
}

TEST_F(HookPath, TheTextStaysWithinItsBound) {
  append(before());
  hook();
  ReinjectOptions o;
  o.db = "/arch/a.db";
  o.just_compacted = true;
  const std::size_t whole = reinject_context(store, "sess", o).text.size();
  for (std::size_t cap : {whole, whole - 1, whole / 2, std::size_t(300), std::size_t(200)}) {
    o.max_bytes = cap;
    Reinjected r = reinject_context(store, "sess", o);
    EXPECT_LE(r.text.size(), cap);
    if (!r.text.empty() && r.shown < r.identifiers)
      EXPECT_NE(r.text.find(std::to_string(r.identifiers - r.shown) + " more not listed"), std::string::npos);
  }
}

TEST(HookShellQuote, QuotesWhatTheShellWouldRead) {
  EXPECT_EQ(shell_quote("src/a.cpp"), "src/a.cpp");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$(rm -rf x)"), "'$(rm -rf x)'");
  EXPECT_EQ(shell_quote(""), "''");
}

}  // namespace
}  // namespace ctxfold
