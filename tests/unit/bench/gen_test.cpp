// ctxfold-gen (bench/gen_core): the shapes of what it writes. Its speed is measured in bench/, not here.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gen_core.hpp"

namespace {

using nlohmann::json;
using ctxfold::gen::GenOptions;

std::string run_gen(const GenOptions& o, ctxfold::gen::GenStats* stats = nullptr) {
  std::string out;
  auto s = ctxfold::gen::generate(o, [&](std::string_view chunk) { out.append(chunk); });
  if (stats) *stats = s;
  return out;
}

std::vector<json> parse_lines(const std::string& text) {
  std::vector<json> v;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) v.push_back(json::parse(line));
  return v;
}

struct Shape {
  std::size_t nodes = 0, main_roots = 0, dangling = 0, duplicate_ids = 0, orphan_results = 0;
  std::set<std::string> sessions;
};

Shape shape_of(const std::vector<json>& lines) {
  Shape s;
  std::set<std::string> seen, uses;
  for (const json& l : lines) {
    if (l.contains("sessionId")) s.sessions.insert(l["sessionId"].get<std::string>());
    if (l.contains("message") && l["message"].contains("content") && l["message"]["content"].is_array())
      for (const json& b : l["message"]["content"]) {
        if (b.value("type", "") == "tool_use") uses.insert(b["id"].get<std::string>());
        if (b.value("type", "") == "tool_result" && !uses.count(b["tool_use_id"].get<std::string>())) ++s.orphan_results;
      }
    if (!l.contains("uuid")) continue;
    ++s.nodes;
    const json& p = l["parentUuid"];
    if (p.is_null()) {
      if (!l.value("isSidechain", false)) ++s.main_roots;
    } else if (!seen.count(p.get<std::string>())) {
      ++s.dangling;
    }
    if (!seen.insert(l["uuid"].get<std::string>()).second) ++s.duplicate_ids;
  }
  return s;
}

std::string real_dir() { return std::string(CTXFOLD_TRANSCRIPTS_DIR) + "/claude-code"; }

}  // namespace

TEST(Gen, SyntheticIsOneWellFormedChain) {
  GenOptions o;
  o.synthetic = true;
  o.nodes = 500;
  ctxfold::gen::GenStats st;
  auto lines = parse_lines(run_gen(o, &st));
  Shape s = shape_of(lines);
  EXPECT_EQ(s.nodes, 500u);
  EXPECT_EQ(st.nodes, 500u);
  EXPECT_EQ(s.main_roots, 1u);
  EXPECT_EQ(s.dangling, 0u);
  EXPECT_EQ(s.duplicate_ids, 0u);
  EXPECT_EQ(s.orphan_results, 0u);
  EXPECT_EQ(s.sessions.size(), 1u);
}

TEST(Gen, SameSeedSameBytesOtherSeedOtherIds) {
  GenOptions o;
  o.synthetic = true;
  o.nodes = 200;
  std::string a = run_gen(o), b = run_gen(o);
  EXPECT_EQ(a, b);
  o.seed = 2;
  std::string c = run_gen(o);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), c.size());  // same shapes: ids keep their lengths
}

TEST(Gen, CompactTailShape) {
  GenOptions o;
  o.synthetic = true;
  o.nodes = 1000;
  o.compact_tail = 50;
  ctxfold::gen::GenStats st;
  auto lines = parse_lines(run_gen(o, &st));
  Shape s = shape_of(lines);
  EXPECT_EQ(s.nodes, 1000u);
  EXPECT_EQ(s.dangling, 0u);
  EXPECT_EQ(s.main_roots, 2u);  // the first line and the boundary
  std::size_t b = 0;
  while (b < lines.size() && lines[b].value("subtype", "") != "compact_boundary") ++b;
  ASSERT_LT(b + 1, lines.size());
  const json& boundary = lines[b];
  const json& summary = lines[b + 1];
  EXPECT_TRUE(boundary["parentUuid"].is_null());
  EXPECT_TRUE(summary.value("isCompactSummary", false));
  EXPECT_EQ(summary["parentUuid"], boundary["uuid"]);
  // logicalParentUuid names a line written before the boundary
  bool found = false;
  for (std::size_t i = 0; i < b; ++i)
    if (lines[i].contains("uuid") && lines[i]["uuid"] == boundary["logicalParentUuid"]) found = true;
  EXPECT_TRUE(found);
  // walking back from the last line reaches the summary within the tail
  std::map<std::string, json> parent;
  for (const json& l : lines)
    if (l.contains("uuid")) parent[l["uuid"].get<std::string>()] = l["parentUuid"];
  std::string u = lines.back()["uuid"].get<std::string>();
  int hops = 0;
  while (u != summary["uuid"].get<std::string>() && hops < 1000) {
    const json& p = parent[u];
    ASSERT_FALSE(p.is_null());
    u = p.get<std::string>();
    ++hops;
  }
  EXPECT_LE(hops, 60);
  EXPECT_GE(hops, 20);
  ASSERT_TRUE(st.tail.has_value());
  EXPECT_EQ(*st.cut_at + 2 + *st.tail, 1000u);
}

TEST(Gen, RealTranscriptsKeepLinksAndStreamingSplit) {
  auto paths = ctxfold::gen::default_sources(real_dir());
  if (paths.empty()) GTEST_SKIP() << "no transcripts at " << real_dir();
  GenOptions o;
  o.paths = paths;
  o.nodes = 9000;  // more than two cycles over the samples
  o.compact_tail = 50;
  ctxfold::gen::GenStats st;
  auto lines = parse_lines(run_gen(o, &st));
  Shape s = shape_of(lines);
  EXPECT_EQ(s.nodes, 9000u);
  EXPECT_GE(st.cycles, 2u);
  EXPECT_EQ(s.dangling, 0u);
  EXPECT_EQ(s.duplicate_ids, 0u);
  EXPECT_EQ(s.orphan_results, 0u);
  EXPECT_EQ(s.main_roots, 2u);
  EXPECT_EQ(s.sessions.size(), 1u);

  // No id of the sources survives, and streamed lines still share their message.id.
  std::set<std::string> source_ids;
  std::size_t source_multi = 0;
  for (const auto& p : paths) {
    std::ifstream in(p);
    std::string line;
    std::map<std::string, int> per_msg;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) continue;
      if (j.contains("uuid")) source_ids.insert(j["uuid"].get<std::string>());
      if (j.value("type", "") == "assistant") ++per_msg[j["message"]["id"].get<std::string>()];
    }
    for (auto& [id, n] : per_msg) source_multi += n > 1;
  }
  std::map<std::string, int> per_msg;
  for (const json& l : lines) {
    if (l.contains("uuid")) EXPECT_FALSE(source_ids.count(l["uuid"].get<std::string>()));
    if (l.value("type", "") == "assistant") ++per_msg[l["message"]["id"].get<std::string>()];
  }
  std::size_t multi = 0;
  for (auto& [id, n] : per_msg) multi += n > 1;
  EXPECT_GE(multi, source_multi);  // at least one full cycle of streamed messages
}

// --short N: every string of a line's message is at most N bytes and still valid UTF-8 (json::parse
// of each line throws otherwise), with the same node count and links as the full replay.
TEST(Gen, ShortCutsEveryMessageStringAndKeepsTheShape) {
  auto paths = ctxfold::gen::default_sources(real_dir());
  if (paths.empty()) GTEST_SKIP() << "no transcripts at " << real_dir();
  GenOptions o;
  o.paths = paths;
  o.nodes = 5000;
  o.short_text = 40;
  auto lines = parse_lines(run_gen(o));
  Shape s = shape_of(lines);
  EXPECT_EQ(s.nodes, 5000u);
  EXPECT_EQ(s.dangling, 0u);
  EXPECT_EQ(s.duplicate_ids, 0u);
  EXPECT_EQ(s.orphan_results, 0u);
  std::size_t longest = 0, cut = 0;
  std::function<void(const json&)> walk = [&](const json& v) {
    if (v.is_string()) {
      const std::size_t n = v.get_ref<const std::string&>().size();
      longest = std::max(longest, n);
      if (n >= 37) ++cut;  // at the limit, or backed off to a character start
    } else if (v.is_structured()) {
      for (const auto& c : v) walk(c);
    }
  };
  for (const json& l : lines)
    if (l.contains("message")) walk(l["message"]);
  EXPECT_LE(longest, 40u);
  EXPECT_GT(cut, 100u) << "the sources hold many longer strings";
}

namespace {
std::string format_dir(const char* sub) { return std::string(CTXFOLD_TRANSCRIPTS_DIR) + "/" + sub; }
}  // namespace

TEST(Gen, CodexReplaysTheRolloutWithFreshCallIds) {
  auto paths = ctxfold::gen::default_format_sources(format_dir("codex"), ctxfold::gen::Format::codex);
  if (paths.empty()) GTEST_SKIP() << "no transcripts at " << format_dir("codex");
  GenOptions o;
  o.format = ctxfold::gen::Format::codex;
  o.paths = paths;
  o.nodes = 7000;  // more than two replays of the sample
  o.compact_tail = 40;
  ctxfold::gen::GenStats st;
  std::string out;
  st = ctxfold::gen::generate_codex(o, [&](std::string_view c) { out.append(c); });
  auto lines = parse_lines(out);
  ASSERT_EQ(lines.size(), 7000u);
  EXPECT_EQ(st.lines, 7000u);
  EXPECT_GE(st.cycles, 3u);
  EXPECT_EQ(lines[0]["type"], "session_meta");
  EXPECT_EQ(lines[0]["payload"]["id"], st.session);
  std::set<std::string> calls;
  std::size_t metas = 0, compacted = 0, outputs = 0, orphan_outputs = 0, repeated_calls = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json& l = lines[i];
    const std::string type = l.value("type", "");
    metas += type == "session_meta";
    if (type == "compacted") {
      ++compacted;
      EXPECT_EQ(i, lines.size() - 41) << "the compaction comes before the last 40 lines";
    }
    if (type != "response_item") continue;
    const json& p = l["payload"];
    const std::string pt = p.value("type", "");
    if (pt == "function_call" || pt == "custom_tool_call") {
      if (!calls.insert(p["call_id"].get<std::string>()).second) ++repeated_calls;
    }
    if (pt == "function_call_output" || pt == "custom_tool_call_output") {
      ++outputs;
      if (!calls.count(p["call_id"].get<std::string>())) ++orphan_outputs;
    }
  }
  EXPECT_EQ(metas, 1u);
  EXPECT_EQ(compacted, 1u);
  EXPECT_GT(outputs, 500u);
  EXPECT_EQ(orphan_outputs, 0u) << "every output follows its call";
  EXPECT_EQ(repeated_calls, 0u) << "each replay gets fresh call ids";
  // The second replay starts after the sample's records but its session_meta, compacted and
  // context_compacted ones: the same record again, its date moved, its time of day kept.
  const std::size_t replayed = st.source_lines - 3;
  ASSERT_GT(lines.size(), 1 + replayed);
  const json& first = lines[1];
  const json& again = lines[1 + replayed];
  EXPECT_EQ(again["type"], first["type"]);
  EXPECT_EQ(again["payload"].dump(), first["payload"].dump()) << "a record without ids repeats as it was";
  const std::string t1 = first["timestamp"].get<std::string>(), t2 = again["timestamp"].get<std::string>();
  EXPECT_NE(t1.substr(0, 10), t2.substr(0, 10)) << "the second replay is shifted by whole days";
  EXPECT_EQ(t1.substr(10), t2.substr(10));
}

TEST(Gen, GeminiWritesTheLiveRecordingShape) {
  auto paths = ctxfold::gen::default_format_sources(format_dir("gemini"), ctxfold::gen::Format::gemini);
  if (paths.empty()) GTEST_SKIP() << "no transcripts at " << format_dir("gemini");
  GenOptions o;
  o.format = ctxfold::gen::Format::gemini;
  o.paths = paths;
  o.nodes = 400;  // several replays of the samples
  std::string out;
  auto st = ctxfold::gen::generate_gemini(o, [&](std::string_view c) { out.append(c); });
  auto lines = parse_lines(out);
  ASSERT_EQ(lines.size(), 400u);
  EXPECT_GE(st.cycles, 2u);
  EXPECT_EQ(lines[0]["sessionId"], st.session);
  EXPECT_EQ(lines[0]["kind"], "main");
  std::map<std::string, int> writes;
  std::set<std::string> called;
  std::size_t responses = 0, unanswered = 0, streamed = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const json& l = lines[i];
    ASSERT_TRUE(l.contains("id") && l["id"].is_string()) << i;
    const std::string id = l["id"].get<std::string>();
    if (++writes[id] == 2) {
      ++streamed;
      EXPECT_EQ(lines[i - 1]["id"], id) << "a turn is written again right after its streamed text";
      EXPECT_FALSE(lines[i - 1].contains("toolCalls"));
    }
    if (l.contains("toolCalls"))
      for (const json& c : l["toolCalls"]) called.insert(c["id"].get<std::string>());
    if (l["content"].is_array())
      for (const json& part : l["content"])
        if (part.contains("functionResponse")) {
          ++responses;
          if (!called.count(part["functionResponse"]["id"].get<std::string>())) ++unanswered;
        }
  }
  for (const auto& [id, n] : writes) EXPECT_LE(n, 2) << id;
  EXPECT_GT(streamed, 20u);
  EXPECT_GT(responses, 20u);
  EXPECT_EQ(unanswered, 0u) << "each tool result follows its call";
  o.compact_tail = 10;
  EXPECT_THROW(ctxfold::gen::generate_gemini(o, [](std::string_view) {}), std::runtime_error);
}
