// Importers for Codex, Gemini, OpenAI / Anthropic messages, OpenHands and ctxfold JSONL, and
// format detection. Real samples are read from CTXFOLD_TRANSCRIPTS_DIR (never copied into the
// repository); the expected numbers were counted from those files independently (python over
// the raw JSON), see the comments at each assertion.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "import/ctxfold_jsonl.hpp"
#include "import/formats_common.hpp"
#include "import/import.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "util/error.hpp"
#include "session/open.hpp"
#include "import/warnings_text.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

const std::string kDir = CTXFOLD_TRANSCRIPTS_DIR;
const std::string kCodex =
    kDir + "/codex/REDACTED_TEXT_compacted_rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl";
const std::string kCodexSession = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9";
const std::string kGeminiErrors = kDir + "/gemini/session-2025-12-13T19-01-049d9bb6.json";
const std::string kGemini0724 = kDir + "/gemini/session-2025-12-30T07-24-a1c91f1a.json";
const std::string kGemini0744 = kDir + "/gemini/session-2025-12-30T07-44-a1c91f1a.json";
const std::string kMiniSwe = kDir + "/interchange/openai_chat_messages_miniswe_github_issue.traj.json";
const std::string kOpenHands = kDir + "/interchange/openhands_trajectory_basic.json";


struct FormatsFixture {
  TempDir dir;
  Store store = open_store(dir.path("test.db"), Store::Mode::read_write);

  ImportResult import(const std::string& path, const std::string& format = "auto") {
    ImportOptions opts;
    opts.format = format;
    return import_paths(store, {path}, opts);
  }

  std::vector<Node> nodes(const std::string& session) {
    std::vector<Node> out;
    store.for_each_node(session, [&](const Node& n) {
      out.push_back(n);
      return true;
    });
    return out;
  }

  /// HEAD's predecessor spine, root first.
  std::vector<Node> spine(const std::string& session) {
    std::vector<Node> out;
    auto id = store.head(session);
    while (id) {
      auto n = store.node(*id);
      if (!n) break;
      out.push_back(*n);
      id = n->predecessor;
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
};

std::int64_t added(const ImportResult& r) {
  std::int64_t n = 0;
  for (const auto& s : r.sessions) n += s.nodes_added;
  return n;
}

std::int64_t count_code(const ImportResult& r, const std::string& code) {
  return std::count_if(r.warnings.begin(), r.warnings.end(), [&](const ImportWarning& w) { return w.code == code; });
}

std::map<std::string, int> role_counts(const std::vector<Node>& nodes) {
  std::map<std::string, int> m;
  for (const auto& n : nodes) m[n.kind == kind::kMessage ? n.role : n.kind]++;
  return m;
}

int block_count(const std::vector<Node>& nodes, const std::string& type) {
  int k = 0;
  for (const auto& n : nodes)
    for (const auto& b : n.content)
      if (json_str(b, "type") == type) ++k;
  return k;
}

/// Tool pairing over a chain: ids called and never answered, and ids answered but never called.
std::pair<std::set<std::string>, std::set<std::string>> unpaired(const std::vector<Node>& chain) {
  std::set<std::string> calls, results;
  for (const auto& n : chain) {
    for (auto& id : tool_use_ids(n)) calls.insert(id);
    for (auto& id : tool_result_ids(n)) results.insert(id);
  }
  std::set<std::string> open, orphan;
  for (auto& c : calls)
    if (!results.count(c)) open.insert(c);
  for (auto& r : results)
    if (!calls.count(r)) orphan.insert(r);
  return {open, orphan};
}

// ---------------------------------------------------------------------------------------------
// Detection

TEST(FormatsDetect, RealFilesOfEveryFormat) {
  EXPECT_EQ(detect_format(kCodex), "codex");
  EXPECT_EQ(detect_format(kGeminiErrors), "gemini");
  EXPECT_EQ(detect_format(kGemini0724), "gemini");
  EXPECT_EQ(detect_format(kGemini0744), "gemini");
  EXPECT_EQ(detect_format(kMiniSwe), "openai");
  EXPECT_EQ(detect_format(kOpenHands), "openhands");
  int claude = 0;
  for (const auto& e : fs::recursive_directory_iterator(kDir + "/claude-code")) {
    if (e.path().extension() != ".jsonl") continue;
    EXPECT_EQ(detect_format(e.path().string()), "claude-code") << e.path();
    ++claude;
  }
  EXPECT_GE(claude, 10);
}

TEST(FormatsDetect, SyntheticShapes) {
  TempDir d;
  // Anthropic: blocks with tool_use / tool_result.
  EXPECT_EQ(detect_format(d.write("a.json", R"([{"role":"user","content":"hi"},
    {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]}])")),
            "anthropic");
  // Anthropic request body with a top-level system.
  EXPECT_EQ(detect_format(d.write("b.json", R"({"system":"be brief","messages":[{"role":"user","content":"hi"}]})")),
            "anthropic");
  // OpenAI: tool_calls and role tool.
  EXPECT_EQ(detect_format(d.write("c.json", R"([{"role":"system","content":"s"},{"role":"assistant","content":null,
    "tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"c1","content":"ok"}])")),
            "openai");
  // OpenAI: {messages:[...]} with other keys (mini-swe style).
  EXPECT_EQ(detect_format(d.write("d.traj.json", R"({"info":{"x":1},"messages":[{"role":"user","content":"u"}]})")),
            "openai");
  // ctxfold JSONL.
  EXPECT_EQ(detect_format(d.write("e.jsonl", "{\"schema\":\"ctxfold.session/1\",\"id\":\"s\"}\n"
                                            "{\"id\":\"n1\",\"kind\":\"message\",\"role\":\"user\",\"content\":\"x\"}\n")),
            "ctxfold");
  EXPECT_EQ(detect_format(d.write("f.jsonl", "{\"id\":\"n1\",\"session\":\"s\",\"predecessor\":null,\"kind\":\"message\","
                                            "\"role\":\"user\",\"content\":[]}\n")),
            "ctxfold");
  // Codex whose first line is NUL bytes: later lines decide.
  EXPECT_EQ(detect_format(d.write("g.jsonl", std::string(20, '\0') +
                                                "\n{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{}}\n")),
            "codex");
  // OpenHands under "history".
  EXPECT_EQ(detect_format(d.write("h.json", R"({"instance_id":"x","history":[{"id":0,"source":"user","action":"message","args":{}}]})")),
            "openhands");
  // Nothing recognisable.
  try {
    detect_format(d.write("i.json", R"({"hello":"world"})"));
    FAIL() << "expected import.unknown_format";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "import.unknown_format");
    EXPECT_EQ(e.exit(), Exit::bad_input);
  }
  EXPECT_EQ(import_formats().front(), "auto");
  EXPECT_EQ(import_formats().size(), 14u);
}

// Claude Code's envelope (uuid, parentUuid, sessionId, type) is claimed only when the records'
// content fits (docs/import.md "Detection"): Qwen Code wears the same envelope around
// Gemini-style parts.
constexpr const char* kEnvelopeUser =
    R"({"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","message":)";

std::string detect_error(const std::string& path, std::string* message = nullptr) {
  try {
    detect_format(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::bad_input);
    if (message) *message = e.what();
    return e.code();
  }
  return "claimed";
}

TEST(FormatsDetect, EnvelopeAloneClaimsNothing) {
  TempDir d;
  const std::string parts = std::string(kEnvelopeUser) + R"({"role":"user","parts":[{"text":"hi"}]}})" + "\n";
  const std::string content = std::string(kEnvelopeUser) + R"({"role":"user","content":"hi"}})" + "\n";
  const std::string neither = std::string(kEnvelopeUser) + R"({"role":"user"}})" + "\n";
  EXPECT_EQ(detect_format(d.write("claude.jsonl", content + content)), "claude-code");
  std::string msg;
  // Gemini-style parts in the envelope: Qwen Code's file, not Claude Code's.
  const std::string qwen = d.write("qwen.jsonl", R"({"uuid":"x","parentUuid":null,"sessionId":"s","type":"user"})"
                                                 "\n" + parts);
  EXPECT_EQ(detect_format(qwen), "qwen");
  // Both kinds of content in one file: two formats could claim it.
  EXPECT_EQ(detect_error(d.write("both.jsonl", content + parts), &msg), "import.ambiguous_format");
  EXPECT_NE(msg.find("both.jsonl:2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 1"), std::string::npos) << msg;
  // A message that holds neither: no format fits.
  EXPECT_EQ(detect_error(d.write("none.jsonl", neither + neither), &msg), "import.unknown_format");
  EXPECT_NE(msg.find("none.jsonl:1"), std::string::npos) << msg;
  // A Claude Code file whose first records carry no message (a title, a snapshot) stays Claude Code's.
  EXPECT_EQ(detect_format(d.write("title.jsonl", R"({"type":"summary","summary":"t","leafUuid":"u1"})" "\n" + content)),
            "claude-code");
}

// pi's envelope (a session header, entries with id and parentId) is claimed only when every record
// fits pi's session format (docs/formats/pi.md): a block, role or entry type pi never writes is
// exit 3 naming the line.
TEST(FormatsDetect, PiEnvelopeClaimsOnlyFittingContent) {
  TempDir d;
  const std::string header = R"({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"})" "\n";
  const std::string user = R"({"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"hi"}})" "\n";
  EXPECT_EQ(detect_format(d.write("pi.jsonl", header + user)), "pi");
  EXPECT_EQ(detect_format(d.write("headless.jsonl", user)), "pi");
  std::string msg;
  const std::string block =
      R"({"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"tool_use"}]}})" "\n";
  EXPECT_EQ(detect_error(d.write("block.jsonl", header + user + block), &msg), "import.ambiguous_format");
  EXPECT_NE(msg.find("block.jsonl:3: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("content block type 'tool_use'"), std::string::npos) << msg;
  const std::string parts = R"({"type":"message","id":"u1","parentId":null,"message":{"role":"model","parts":[]}})" "\n";
  EXPECT_EQ(detect_error(d.write("role.jsonl", header + parts), &msg), "import.ambiguous_format");
  EXPECT_NE(msg.find("role 'model'"), std::string::npos) << msg;
  const std::string typed = R"({"type":"user","id":"u1","parentId":null,"message":{"role":"user","content":"x"}})" "\n";
  EXPECT_EQ(detect_error(d.write("type.jsonl", typed), &msg), "import.unknown_format");
  EXPECT_NE(msg.find("entry type 'user'"), std::string::npos) << msg;
}

TEST(FormatsDetect, EmptyNodeIsAWarningWithItsLine) {
  FormatsFixture f;
  // Forced through the Claude Code importer, a record holding parts converts to an empty node.
  const std::string path = f.dir.write(
      "forced.jsonl", std::string(kEnvelopeUser) + R"({"role":"user","content":"hi"}})" "\n" +
                          R"({"uuid":"u2","parentUuid":"u1","sessionId":"s","timestamp":"t","type":"assistant",)"
                          R"("message":{"role":"model","parts":[{"text":"hello"}]}})" "\n");
  ImportResult r = f.import(path, "claude-code");
  int empty = 0;
  for (const auto& w : r.warnings)
    if (w.code == "node.empty") {
      ++empty;
      EXPECT_EQ(w.line, 2);
      EXPECT_EQ(w.file, path);
    }
  EXPECT_EQ(empty, 1) << warnings_text(r);
}

// ---------------------------------------------------------------------------------------------
// Codex

TEST(FormatsCodex, RealCompactedRollout) {
  FormatsFixture f;
  ImportResult r = f.import(kCodex);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0].session, kCodexSession);  // session_meta.payload.id
  EXPECT_EQ(r.sessions[0].format, "codex");
  // Chain: 1 instructions node (session_meta.base_instructions) + 46 user + 45 developer messages
  // + 365 tool outputs (316 function_call_output + 49 custom_tool_call_output) + 286 assistant
  // nodes (one per model request: 286 turn_context lines) = 743, plus the compaction summary.
  EXPECT_EQ(r.sessions[0].nodes_added, 744);
  std::vector<Node> all = f.nodes(kCodexSession);
  ASSERT_EQ(all.size(), 744u);
  auto roles = role_counts(all);
  EXPECT_EQ(roles["user"], 46);
  EXPECT_EQ(roles["system"], 46);  // 45 developer + 1 instructions
  EXPECT_EQ(roles["tool"], 365);
  EXPECT_EQ(roles["assistant"], 286);
  EXPECT_EQ(roles["summary"], 1);
  int developer = 0;
  for (const auto& n : all)
    if (json_str(n.metadata, "codex_role") == "developer") ++developer;
  EXPECT_EQ(developer, 45);
  // event_msg mirrors never become messages: 255 agent_message / 38 user_message mirrors exist, but
  // assistant text blocks come only from the 255 response_item assistant messages.
  EXPECT_EQ(block_count(all, "tool_use"), 365);
  EXPECT_EQ(block_count(all, "tool_result"), 365);
  // 219 reasoning items (encrypted) + 7 web_search_call in the chain; +1 compaction item in the summary.
  EXPECT_EQ(block_count(all, "opaque"), 227);
  // Kept records: session_meta 1 + event_msg 1132 + turn_context 286 + compacted 1.
  EXPECT_EQ(f.store.source_record_count(kCodexSession), 1420);
  // Usage from token_count: every assistant node is followed by one.
  int with_usage = 0;
  for (const auto& n : all)
    if (n.role == "assistant" && n.metadata.contains("usage")) ++with_usage;
  EXPECT_EQ(with_usage, 286);

  // The summary: line 1,788, 40 replacement items (51 content parts + the opaque compaction item),
  // covering the 507 chain nodes written before it (all but the instructions root), spliced
  // after the instructions node.
  const Node* summary = nullptr;
  for (const auto& n : all)
    if (n.kind == kind::kSummary) summary = &n;
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(summary->id, kCodexSession + ":1788");
  EXPECT_EQ(summary->metadata["strategy"], "rolling");
  EXPECT_EQ(summary->metadata["origin"], "import");
  EXPECT_EQ(summary->metadata["format"], "codex");
  EXPECT_EQ(summary->metadata["replacement_history_items"], 40);
  EXPECT_EQ(summary->content.size(), 52u);
  EXPECT_EQ(summary->content.back()["type"], "opaque");
  EXPECT_EQ(summary->content.back()["data"]["type"], "compaction");
  EXPECT_EQ(summary->predecessor, std::optional<std::string>(kCodexSession + ":1"));
  std::vector<std::string> covers = f.store.covers_of(summary->seq);
  ASSERT_EQ(covers.size(), 507u);
  EXPECT_EQ(covers.front(), kCodexSession + ":2");
  EXPECT_EQ(covers.back(), kCodexSession + ":1786");

  // HEAD is the last assistant node; the chain runs through the pre-compaction nodes (the summary
  // is a view node, not on the chain), and every tool call on it is answered.
  EXPECT_EQ(f.store.head(kCodexSession), std::optional<std::string>(kCodexSession + ":2720"));
  std::vector<Node> chain = f.spine(kCodexSession);
  EXPECT_EQ(chain.size(), 743u);
  EXPECT_EQ(chain.front().id, kCodexSession + ":1");
  EXPECT_EQ(chain[508].id, kCodexSession + ":1793");
  EXPECT_EQ(chain[508].predecessor, std::optional<std::string>(kCodexSession + ":1786"));
  auto [open, orphan] = unpaired(chain);
  EXPECT_TRUE(open.empty()) << open.size();
  EXPECT_TRUE(orphan.empty()) << orphan.size();
  // One aggregated warning for the 316 redacted (non-JSON) argument strings, nothing else.
  EXPECT_EQ(count_code(r, "tool.arguments_raw"), 1) << warnings_text(r);
  EXPECT_EQ(r.warnings.size(), 1u) << warnings_text(r);
  // Arguments are kept as {"raw": string}.
  for (const auto& n : chain)
    for (const auto& b : n.content)
      if (b["type"] == "tool_use") {
        EXPECT_TRUE(b["input"].contains("raw"));
        break;
      }

  ImportResult again = f.import(kCodex);
  EXPECT_EQ(added(again), 0);
  EXPECT_EQ(f.store.source_record_count(kCodexSession), 1420);
}

TEST(FormatsCodex, SyntheticItemsAndLegacyCompaction) {
  FormatsFixture f;
  std::string rollout =
      R"({"timestamp":"t0","type":"session_meta","payload":{"id":"s-codex","instructions":null}})" "\n"
      R"({"timestamp":"t1","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}})" "\n"
      R"({"timestamp":"t1","type":"event_msg","payload":{"type":"user_message","message":"look"}})" "\n"
      R"({"timestamp":"t2","type":"turn_context","payload":{"model":"m"}})" "\n"
      R"({"timestamp":"t3","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"plan"}],"content":null}})" "\n"
      R"({"timestamp":"t3","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"cmd\":[\"ls\"]}","call_id":"c1"}})" "\n"
      R"({"timestamp":"t3","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":10,"output_tokens":2}}}})" "\n"
      R"({"timestamp":"t4","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a\nb"}})" "\n"
      R"({"timestamp":"t5","type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{"id":"g"}}})" "\n"
      R"({"timestamp":"t6","type":"compacted","payload":{"message":"summary of the work"}})" "\n"
      R"({"timestamp":"t7","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}})" "\n";
  ImportResult r = f.import(f.dir.write("rollout.jsonl", rollout));
  ASSERT_EQ(r.sessions.size(), 1u) << warnings_text(r);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);
  std::vector<Node> all = f.nodes("s-codex");
  // user, assistant(thinking+tool_use), tool, summary, assistant
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].content[1]["type"], "image");
  EXPECT_EQ(all[0].content[1]["media_type"], "image/png");
  EXPECT_EQ(all[0].content[1]["data"], "iVBORw0KGgo=");
  EXPECT_EQ(all[1].content[0]["type"], "thinking");
  EXPECT_EQ(all[1].content[0]["thinking"], "plan");
  EXPECT_EQ(all[1].content[1]["input"]["cmd"][0], "ls");
  EXPECT_EQ(all[1].metadata["usage"]["input_tokens"], 10);
  EXPECT_EQ(all[2].role, "tool");
  EXPECT_EQ(all[2].content[0]["tool_use_id"], "c1");
  EXPECT_EQ(all[3].kind, "summary");
  EXPECT_EQ(all[3].content[0]["text"], "summary of the work");
  EXPECT_FALSE(all[3].predecessor.has_value());
  EXPECT_EQ(f.store.covers_of(all[3].seq), (std::vector<std::string>{"s-codex:2", "s-codex:5", "s-codex:8"}));
  EXPECT_EQ(all[4].predecessor, std::optional<std::string>("s-codex:8"));
  EXPECT_EQ(f.store.head("s-codex"), std::optional<std::string>("s-codex:11"));
  // session_meta, user_message, turn_context, token_count, ghost_snapshot, compacted
  EXPECT_EQ(f.store.source_record_count("s-codex"), 6);
}

// ---------------------------------------------------------------------------------------------
// Gemini

TEST(FormatsGemini, ErrorsInfoAndToolStatuses) {
  FormatsFixture f;
  ImportResult r = f.import(kGeminiErrors);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);
  const std::string s = "session-2025-12-13T19-01-049d9bb6";
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0].session, s);
  std::vector<Node> all = f.nodes(s);
  // 5 user, 7 gemini, 3 tool nodes (3 gemini messages with toolCalls), 4 error + 3 info events.
  ASSERT_EQ(all.size(), 22u);
  auto roles = role_counts(all);
  EXPECT_EQ(roles["user"], 5);
  EXPECT_EQ(roles["assistant"], 7);
  EXPECT_EQ(roles["tool"], 3);
  EXPECT_EQ(roles["event"], 7);
  EXPECT_EQ(block_count(all, "thinking"), 14);
  EXPECT_EQ(block_count(all, "tool_use"), 3);
  // statuses success / error / cancelled: the last two are errors.
  int errors = 0;
  for (const auto& n : all)
    for (const auto& b : n.content)
      if (b["type"] == "tool_result" && b["is_error"] == true) ++errors;
  EXPECT_EQ(errors, 2);
  EXPECT_EQ(all[0].id, all[0].id);  // user message id preserved (uuid)
  EXPECT_EQ(all[1].metadata["usage"]["input"], 15493);
  EXPECT_EQ(all[2].id, all[1].id + ":results");
  EXPECT_EQ(all[2].content[0]["tool_use_id"], "google_web_search-1765652491329-2df891a9e1327");
  auto [open, orphan] = unpaired(f.spine(s));
  EXPECT_TRUE(open.empty());
  EXPECT_TRUE(orphan.empty());
  EXPECT_EQ(f.spine(s).size(), 22u);
  EXPECT_EQ(added(f.import(kGeminiErrors)), 0);
}

TEST(FormatsGemini, SameSessionIdTwoFilesAndSummary) {
  FormatsFixture f;
  ImportResult r1 = f.import(kGemini0724);
  ImportResult r2 = f.import(kGemini0744);
  EXPECT_TRUE(r1.warnings.empty() && r2.warnings.empty()) << warnings_text(r1) << warnings_text(r2);
  // Keyed by file, not by the shared sessionId.
  std::vector<Node> a = f.nodes("session-2025-12-30T07-24-a1c91f1a");
  std::vector<Node> b = f.nodes("session-2025-12-30T07-44-a1c91f1a");
  EXPECT_EQ(a.size(), 10u);  // 2 user + 5 gemini + 3 tool nodes
  EXPECT_EQ(b.size(), 18u);  // 2 user + 9 gemini + 7 tool nodes
  EXPECT_EQ(block_count(a, "tool_use"), 4);
  EXPECT_EQ(block_count(a, "tool_result"), 4);
  EXPECT_EQ(block_count(b, "tool_use"), 8);
  EXPECT_EQ(block_count(b, "tool_result"), 8);
  EXPECT_EQ(block_count(a, "thinking"), 13);
  EXPECT_EQ(block_count(b, "thinking"), 20);
  auto info = f.store.session("session-2025-12-30T07-44-a1c91f1a");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata["summary"], "Make Gemini web app open as installed app.");
  EXPECT_EQ(info->metadata["sessionId"], f.store.session("session-2025-12-30T07-24-a1c91f1a")->metadata["sessionId"]);
  EXPECT_EQ(f.store.head("session-2025-12-30T07-44-a1c91f1a"), std::optional<std::string>(b.back().id));
}

// ---------------------------------------------------------------------------------------------
// OpenAI / Anthropic messages

TEST(FormatsOpenAI, MiniSweTrajectory) {
  FormatsFixture f;
  ImportResult r = f.import(kMiniSwe);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);
  const std::string s = "openai_chat_messages_miniswe_github_issue";
  std::vector<Node> all = f.nodes(s);
  ASSERT_EQ(all.size(), 22u);
  auto roles = role_counts(all);
  EXPECT_EQ(roles["system"], 1);
  EXPECT_EQ(roles["user"], 11);
  EXPECT_EQ(roles["assistant"], 10);
  EXPECT_EQ(all[0].id, s + ":0");
  EXPECT_EQ(all[0].metadata["source"]["line"], 2);  // pretty-printed array: first element on line 2
  EXPECT_EQ(f.store.head(s), std::optional<std::string>(s + ":21"));
  EXPECT_EQ(f.spine(s).size(), 22u);
  EXPECT_EQ(added(f.import(kMiniSwe)), 0);
}

TEST(FormatsOpenAI, SyntheticToolCalls) {
  FormatsFixture f;
  std::string path = f.dir.write("chat.json", R"({"model":"gpt-x","messages":[
  {"role":"system","content":"you are terse"},
  {"role":"user","content":[{"type":"text","text":"what is here?"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ"}}]},
  {"role":"assistant","content":null,"tool_calls":[
    {"id":"call_a","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}},
    {"id":"call_b","type":"function","function":{"name":"cat","arguments":"not json"}}]},
  {"role":"tool","tool_call_id":"call_a","content":"a.txt"},
  {"role":"tool","tool_call_id":"call_b","content":"hello"},
  {"role":"assistant","content":"a.txt says hello","name":"bot"}
]})");
  ImportResult r = f.import(path);
  EXPECT_EQ(count_code(r, "tool.arguments_raw"), 1) << warnings_text(r);
  std::vector<Node> all = f.nodes("chat");
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0].role, "system");
  EXPECT_EQ(all[1].content[1]["type"], "image");
  EXPECT_EQ(all[1].content[1]["media_type"], "image/jpeg");
  EXPECT_EQ(all[2].role, "assistant");
  ASSERT_EQ(all[2].content.size(), 2u);
  EXPECT_EQ(all[2].content[0]["input"]["path"], ".");
  EXPECT_EQ(all[2].content[1]["input"]["raw"], "not json");
  EXPECT_EQ(all[3].role, "tool");
  EXPECT_EQ(all[3].content[0]["tool_use_id"], "call_a");
  EXPECT_EQ(all[4].content[0]["tool_use_id"], "call_b");
  EXPECT_EQ(all[5].metadata["openai_extra"]["name"], "bot");
  EXPECT_EQ(all[3].metadata["source"]["line"], 7);
  auto info = f.store.session("chat");
  EXPECT_EQ(info->metadata["model"], "gpt-x");
  auto [open, orphan] = unpaired(f.spine("chat"));
  EXPECT_TRUE(open.empty());
  EXPECT_TRUE(orphan.empty());
  EXPECT_EQ(added(f.import(path)), 0);
}

TEST(FormatsAnthropic, SyntheticToolUseAndResult) {
  FormatsFixture f;
  std::string path = f.dir.write("cline.json", R"([
  {"role":"user","content":[{"type":"text","text":"read it"}]},
  {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},
     {"type":"text","text":"reading","cache_control":{"type":"ephemeral"}},
     {"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"x"}}],
   "modelInfo":{"modelId":"claude"},"metrics":{"tokens":{"prompt":5}}},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"X"}]}]},
  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"bad","is_error":true},{"type":"text","text":"and?"}]},
  {"role":"assistant","content":[{"type":"redacted_thinking","data":"zzz"},{"type":"text","text":"done"}]}
])");
  EXPECT_EQ(detect_format(path), "anthropic");
  ImportResult r = f.import(path);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);
  std::vector<Node> all = f.nodes("cline");
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[1].content[0]["type"], "thinking");
  EXPECT_EQ(all[1].content[0]["signature"], "sig");
  EXPECT_EQ(all[1].content[2]["type"], "tool_use");
  EXPECT_EQ(all[1].metadata["anthropic_extra"]["modelInfo"]["modelId"], "claude");
  EXPECT_EQ(all[1].metadata["block_extras"]["1"]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(all[2].role, "tool");  // only tool_result blocks
  EXPECT_EQ(all[2].content[0]["content"][0]["text"], "X");
  EXPECT_EQ(all[3].role, "user");  // tool_result plus text stays a user message
  EXPECT_EQ(all[3].content[0]["is_error"], true);
  EXPECT_EQ(all[4].content[0]["type"], "opaque");
  EXPECT_EQ(all[4].content[0]["provider"], "anthropic");
  EXPECT_EQ(f.store.head("cline"), std::optional<std::string>("cline:4"));
  EXPECT_EQ(added(f.import(path)), 0);
}

TEST(FormatsAnthropic, MalformedDocumentWarnsWithLine) {
  FormatsFixture f;
  std::string path = f.dir.write("broken.json", "[\n  {\"role\":\"user\",\"content\":\"a\"},\n  {\"role\":\"assistant\" \"content\":\"b\"}\n]\n");
  ImportResult r = f.import(path, "anthropic");
  ASSERT_EQ(r.warnings.size(), 1u) << warnings_text(r);
  EXPECT_EQ(r.warnings[0].code, "document.malformed");
  EXPECT_EQ(r.warnings[0].line, 3);
  EXPECT_EQ(f.store.node_count("broken"), 0);
  EXPECT_EQ(f.store.source_record_count("broken"), 1);  // the document kept verbatim
}

TEST(FormatsAnthropic, DeepNestingIsRefusedWithoutCrash) {
  FormatsFixture f;
  std::string deep = "[{\"role\":\"user\",\"content\":" + std::string(100000, '[') + std::string(100000, ']') + "}]";
  ImportResult r = f.import(f.dir.write("deep.json", deep), "anthropic");
  EXPECT_EQ(count_code(r, "document.too_deep"), 1);
}

// ---------------------------------------------------------------------------------------------
// OpenHands

TEST(FormatsOpenHands, BasicTrajectory) {
  FormatsFixture f;
  ImportResult r = f.import(kOpenHands);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);
  const std::string s = "openhands_trajectory_basic";
  std::vector<Node> all = f.nodes(s);
  // events 0 (user message), 3 (edit action), 4 (edit observation), 5 (finish action)
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].id, s + ":0");
  EXPECT_EQ(all[0].role, "user");
  EXPECT_EQ(all[1].id, s + ":3");
  EXPECT_EQ(all[1].role, "assistant");
  ASSERT_EQ(all[1].content.size(), 2u);
  EXPECT_EQ(all[1].content[1]["id"], "toolu_017nBp7UfiGqyrA7j77HgtFP");
  EXPECT_EQ(all[1].content[1]["input"]["command"], "create");
  EXPECT_EQ(all[1].metadata["model"], "claude-3-5-sonnet-20241022");
  EXPECT_TRUE(all[1].metadata["usage"].contains("prompt_tokens"));
  EXPECT_EQ(all[2].role, "tool");
  EXPECT_EQ(all[2].content[0]["tool_use_id"], "toolu_017nBp7UfiGqyrA7j77HgtFP");
  // The ACI editor's observation: the model read formatted_output_and_error, not the diff
  // (which stays in the event).
  EXPECT_EQ(all[2].content[0]["content"], "File created successfully at: /workspace/game_2048.py");
  EXPECT_EQ(all[2].metadata["event"]["content"].get<std::string>().rfind("--- /workspace/game_2048.py", 0), 0u);
  EXPECT_EQ(all[3].role, "assistant");
  EXPECT_EQ(all[3].content[1]["name"], "finish");
  EXPECT_EQ(all[3].metadata["usage"]["completion_tokens"], 177);
  // The finish call is the open step at HEAD; the edit pair is matched.
  auto [open, orphan] = unpaired(f.spine(s));
  EXPECT_EQ(open, (std::set<std::string>{"toolu_01BUKu3B7nY574atNECkBiFk"}));
  EXPECT_TRUE(orphan.empty());
  EXPECT_EQ(f.store.head(s), std::optional<std::string>(s + ":5"));
  EXPECT_EQ(added(f.import(kOpenHands)), 0);
}

TEST(FormatsOpenHands, ParallelCallsOfOneResponseFormOneNode) {
  FormatsFixture f;
  std::string mr = R"({"id":"resp1","model":"m","choices":[{"message":{"role":"assistant","content":"two",
     "tool_calls":[{"id":"t1","type":"function","function":{"name":"run","arguments":"{\"c\":1}"}},
                   {"id":"t2","type":"function","function":{"name":"run","arguments":"{\"c\":2}"}}]}}],"usage":{"total_tokens":9}})";
  std::string path = f.dir.write("oh.json", "[{\"id\":1,\"source\":\"user\",\"action\":\"message\",\"args\":{\"content\":\"go\"}},"
      "{\"id\":2,\"source\":\"agent\",\"action\":\"run\",\"args\":{},\"tool_call_metadata\":{\"tool_call_id\":\"t1\",\"model_response\":" + mr + "}},"
      "{\"id\":3,\"source\":\"agent\",\"observation\":\"run\",\"content\":\"one\",\"cause\":2,\"tool_call_metadata\":{\"tool_call_id\":\"t1\",\"model_response\":" + mr + "}},"
      "{\"id\":4,\"source\":\"agent\",\"action\":\"run\",\"args\":{},\"tool_call_metadata\":{\"tool_call_id\":\"t2\",\"model_response\":" + mr + "}},"
      "{\"id\":5,\"source\":\"agent\",\"observation\":\"error\",\"content\":\"boom\",\"cause\":4,\"tool_call_metadata\":{\"tool_call_id\":\"t2\",\"model_response\":" + mr + "}},"
      "{\"id\":6,\"source\":\"environment\",\"observation\":\"agent_state_changed\",\"message\":\"\",\"extras\":{\"agent_state\":\"finished\"}}]");
  ImportResult r = f.import(path);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);
  std::vector<Node> all = f.nodes("oh");
  ASSERT_EQ(all.size(), 5u);  // user, assistant(t1,t2), tool t1, tool t2, event
  EXPECT_EQ(block_count(all, "tool_use"), 2);
  EXPECT_EQ(all[3].content[0]["is_error"], true);
  EXPECT_EQ(all[4].kind, "event");
  EXPECT_EQ(f.store.source_record_count("oh"), 1);  // the second action of resp1
  auto [open, orphan] = unpaired(f.spine("oh"));
  EXPECT_TRUE(open.empty());
  EXPECT_TRUE(orphan.empty());
}

// ---------------------------------------------------------------------------------------------
// ctxfold JSONL

TEST(FormatsCtxfold, CanonicalNodesKeepIdsAndChain) {
  FormatsFixture f;
  std::string path = f.dir.write("export.jsonl",
      R"({"schema":"ctxfold.session/1","id":"cs","kind":"main","metadata":{"title":"t"}})" "\n"
      R"({"id":"u1","session":"cs","seq":1,"predecessor":null,"kind":"message","role":"user","content":[{"type":"text","text":"hi"}],"metadata":{}})" "\n"
      R"({"id":"a1","session":"cs","seq":2,"predecessor":"u1","kind":"message","role":"assistant","content":[{"type":"text","text":"yo"}],"metadata":{}})" "\n"
      R"({"id":"u2","role":"user","content":"no predecessor key: chained after a1"})" "\n"
      R"({"id":"s1","session":"cs","predecessor":null,"kind":"summary","role":"user","content":"hi/yo","metadata":{"strategy":"rolling"},"covers_ids":["u1","a1"]})" "\n"
      R"({"schema":"ctxfold.export/1","type":"summary","nodes":4})" "\n"
      R"({"id":"bad","role":7})" "\n");
  EXPECT_EQ(detect_format(path), "ctxfold");
  ImportResult r = f.import(path);
  EXPECT_EQ(count_code(r, "input.node"), 1) << warnings_text(r);
  std::vector<Node> all = f.nodes("cs");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[2].id, "u2");
  EXPECT_EQ(all[2].predecessor, std::optional<std::string>("a1"));
  EXPECT_EQ(all[3].kind, "summary");
  EXPECT_EQ(f.store.covers_of(all[3].seq), (std::vector<std::string>{"u1", "a1"}));
  EXPECT_EQ(f.store.head("cs"), std::optional<std::string>("u2"));
  EXPECT_EQ(f.store.session("cs")->metadata["title"], "t");
  EXPECT_EQ(f.store.source_record_count("cs"), 1);  // the invalid node record; export's trailer is skipped
  EXPECT_EQ(added(f.import(path)), 0);
}

TEST(FormatsCtxfold, NodeFromRecordDefaults) {
  bool given = true;
  Node n = node_from_record(parse_json(R"({"role":"user","content":"x"})"), "dflt", &given);
  EXPECT_EQ(n.session, "dflt");
  EXPECT_FALSE(given);
  EXPECT_EQ(n.content[0]["text"], "x");
  Node m = node_from_record(parse_json(R"({"id":"r","predecessor":null,"session":"s","role":"user"})"), "dflt", &given);
  EXPECT_TRUE(given);
  EXPECT_EQ(m.session, "s");
  EXPECT_FALSE(m.predecessor);
  EXPECT_TRUE(is_ctxfold_node_record(parse_json(R"({"schema":"ctxfold.node/1","id":"x"})")));
  EXPECT_FALSE(is_ctxfold_node_record(parse_json(R"({"schema":"ctxfold.export/1"})")));
  EXPECT_TRUE(is_ctxfold_session_record(parse_json(R"({"schema":"ctxfold.session/1","id":"x"})")));
}

// A tool call's argument string: an object is parsed (after a byte order mark and white space),
// anything else is kept raw, an empty string is an empty object.
TEST(ParseArguments, ObjectsParsedOtherTextKeptRaw) {
  bool parsed = false;
  EXPECT_EQ(import_detail::parse_arguments(R"({"a":1})", &parsed), Json({{"a", 1}}));
  EXPECT_TRUE(parsed);
  EXPECT_EQ(import_detail::parse_arguments(" \n\t{\"a\":[1]}", &parsed), Json({{"a", Json::array({1})}}));
  EXPECT_TRUE(parsed);
  EXPECT_EQ(import_detail::parse_arguments("\xEF\xBB\xBF {\"b\":2}", &parsed), Json({{"b", 2}}));
  EXPECT_TRUE(parsed);
  for (const std::string raw : {"[1,2]", "\"text\"", "42", "[REDACTED len=3]", "{not json", "{\"a\":1} trailing", "x{\"a\":1}"}) {
    EXPECT_EQ(import_detail::parse_arguments(raw, &parsed), Json({{"raw", raw}})) << raw;
    EXPECT_FALSE(parsed) << raw;
  }
  EXPECT_EQ(import_detail::parse_arguments("", &parsed), Json::object());
  EXPECT_TRUE(parsed);
}

}  // namespace
}  // namespace ctxfold
