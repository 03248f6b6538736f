// What Codex CLI 0.171 writes and sends (docs/formats/codex.md), as the conformance suite
// (tests/clients/codex) observed it: the rollout's new record types (world_state,
// token_usage_record, the top-level ordinal), base_instructions with a provenance, developer
// messages, a mid-turn compaction with its measured usage; `render --format responses` giving the
// request Codex sends; and OpenAI chat tool-call ids within 40 bytes on every shipped transcript.
// The fixtures are written here from the shapes observed, not copied from a client's files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "import/import.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "session/open.hpp"
#include "temp_dir.hpp"
#include "import/warnings_text.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

struct Fixture {
  TempDir dir{"codex"};
  Store store = open_store(dir.path("t.db"), Store::Mode::read_write);
  ImportResult import_text(const std::string& name, const std::string& text) {
    return import_paths(store, {dir.write(name, text)}, ImportOptions{});
  }
  std::vector<Node> nodes(const std::string& s) {
    std::vector<Node> out;
    store.for_each_node(s, [&](const Node& n) {
      out.push_back(n);
      return true;
    });
    return out;
  }
};

// A Codex 0.171 exec session: base_instructions {text, provenance}, a developer message and the
// environment context, world_state, turn_context, the prompt; a response with text and a call
// whose arguments string is not what re-encoding gives; token_usage_record; the output; a
// response with reasoning (encrypted_content), an apply_patch custom call; its output; the answer.
const char* kRollout171 =
    R"({"timestamp":"t0","ordinal":0,"type":"session_meta","payload":{"id":"s171","cli_version":"0.171.0","originator":"codex_exec","base_instructions":{"text":"You are the agent.","provenance":{"type":"model","model":"m"}}}})" "\n"
    R"({"timestamp":"t1","ordinal":1,"type":"event_msg","payload":{"type":"task_started","turn_id":"u1","model_context_window":258400}})" "\n"
    R"({"timestamp":"t2","ordinal":2,"type":"response_item","payload":{"type":"message","id":"msg_dev","role":"developer","content":[{"type":"input_text","text":"<skills>list</skills>"}]}})" "\n"
    R"({"timestamp":"t2","ordinal":3,"type":"response_item","payload":{"type":"message","id":"msg_env","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}})" "\n"
    R"({"timestamp":"t2","ordinal":4,"type":"world_state","payload":{"full":true,"state":{"model":"m"}}})" "\n"
    R"({"timestamp":"t2","ordinal":5,"type":"turn_context","payload":{"model":"m"}})" "\n"
    R"({"timestamp":"t3","ordinal":6,"type":"response_item","payload":{"type":"message","id":"msg_u","role":"user","content":[{"type":"input_text","text":"read it"}]}})" "\n"
    R"({"timestamp":"t4","ordinal":7,"type":"response_item","payload":{"type":"message","status":"completed","id":"msg_a","role":"assistant","content":[{"type":"output_text","text":"Reading.","annotations":[]}]}})" "\n"
    R"({"timestamp":"t4","ordinal":8,"type":"response_item","payload":{"type":"function_call","status":"completed","id":"fc_1","name":"exec_command","arguments":"{\"cmd\": \"cat a.txt\"}","call_id":"call_1"}})" "\n"
    R"({"timestamp":"t4","ordinal":9,"type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"input_tokens":5000,"cached_input_tokens":100,"output_tokens":20,"reasoning_output_tokens":0,"total_tokens":5020}}})" "\n"
    R"({"timestamp":"t5","ordinal":10,"type":"response_item","payload":{"type":"function_call_output","id":"fco_1","call_id":"call_1","output":"alpha\n"}})" "\n"
    R"({"timestamp":"t5","ordinal":11,"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":1,"output_tokens":1},"model_context_window":258400}}})" "\n"
    R"({"timestamp":"t6","ordinal":12,"type":"response_item","payload":{"type":"reasoning","id":"rs_2","summary":[{"type":"summary_text","text":"patch it"}],"content":null,"encrypted_content":"gAAAAsecret"}})" "\n"
    R"({"timestamp":"t6","ordinal":13,"type":"response_item","payload":{"type":"custom_tool_call","status":"completed","id":"ctc_2","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch\n"}})" "\n"
    R"({"timestamp":"t6","ordinal":14,"type":"token_usage_record","payload":{"response_id":"resp_2","usage":{"input_tokens":5100,"output_tokens":30,"total_tokens":5130}}})" "\n"
    R"({"timestamp":"t7","ordinal":15,"type":"response_item","payload":{"type":"custom_tool_call_output","id":"ctco_2","call_id":"call_2","output":"Success."}})" "\n"
    R"({"timestamp":"t8","ordinal":16,"type":"response_item","payload":{"type":"message","status":"completed","id":"msg_b","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]}})" "\n"
    R"({"timestamp":"t8","ordinal":17,"type":"token_usage_record","payload":{"response_id":"resp_3","usage":{"input_tokens":5200,"output_tokens":5,"total_tokens":5205}}})" "\n";

TEST(Codex171, NewRecordTypesSystemPromptUsageOrdinal) {
  Fixture f;
  ImportResult r = f.import_text("rollout-171.jsonl", kRollout171);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);  // world_state, token_usage_record are known
  auto info = f.store.session("s171");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->metadata["system_prompt"], "You are the agent.");
  EXPECT_EQ(info->metadata["system_prompt_source"], "base_instructions");
  std::vector<Node> all = f.nodes("s171");
  // instructions, developer, env, user, assistant(text+call), tool, assistant(reasoning+custom), tool, assistant
  ASSERT_EQ(all.size(), 9u);
  EXPECT_EQ(all[0].metadata["codex_delivery"], "developer_message");
  EXPECT_EQ(all[1].role, "system");
  EXPECT_EQ(all[1].metadata["codex_role"], "developer");
  EXPECT_EQ(all[4].metadata["source"]["ordinal"], 7);
  // The measured usage of the response, not the token_count that follows its output.
  EXPECT_EQ(all[4].metadata["usage"]["input_tokens"], 5000);
  EXPECT_EQ(all[4].metadata["usage"]["model_context_window"], 258400);
  EXPECT_EQ(all[4].metadata["usage_source"], "token_usage_record");
  EXPECT_EQ(all[4].metadata["response_id"], "resp_1");
  EXPECT_EQ(all[6].metadata["usage"]["output_tokens"], 30);
  EXPECT_EQ(all[8].metadata["usage"]["total_tokens"], 5205);
}

TEST(Codex171, RenderResponsesIsTheRequestCodexSends) {
  Fixture f;
  f.import_text("rollout-171.jsonl", kRollout171);
  Rendered r = render_context(f.store, "s171", RenderOptions{});
  Json body = render_request_body(r, RenderFormat::responses);
  EXPECT_FALSE(body.contains("instructions"));  // 0.171 sends it as the first developer message
  const Json& in = body["input"];
  ASSERT_EQ(in.size(), 11u) << dump_json(body);
  auto text = [&](std::size_t i) { return in[i]["content"][0]["text"].get<std::string>(); };
  EXPECT_EQ(in[0]["role"], "developer");
  EXPECT_EQ(text(0), "You are the agent.");
  EXPECT_EQ(in[1]["role"], "developer");  // a developer message stays one
  EXPECT_EQ(in[1]["id"], "msg_dev");
  EXPECT_EQ(in[2]["role"], "user");
  EXPECT_EQ(in[3]["content"][0]["type"], "input_text");
  EXPECT_EQ(in[4]["role"], "assistant");
  EXPECT_EQ(in[4]["content"][0]["type"], "output_text");
  EXPECT_EQ(in[4]["id"], "msg_a");
  EXPECT_EQ(in[5]["type"], "function_call");
  EXPECT_EQ(in[5]["arguments"], "{\"cmd\": \"cat a.txt\"}");  // the string as sent, spacing kept
  EXPECT_EQ(in[5]["call_id"], "call_1");
  EXPECT_EQ(in[6]["type"], "function_call_output");
  EXPECT_EQ(in[6]["output"], "alpha\n");
  EXPECT_EQ(in[7]["type"], "reasoning");
  EXPECT_EQ(in[7]["encrypted_content"], "gAAAAsecret");
  EXPECT_EQ(in[8]["type"], "custom_tool_call");
  EXPECT_EQ(in[8]["input"], "*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch\n");
  EXPECT_EQ(in[9]["type"], "custom_tool_call_output");
  EXPECT_EQ(in[9]["call_id"], "call_2");
  EXPECT_EQ(text(10), "Done.");
  // Deterministic.
  EXPECT_EQ(dump_json(body), dump_json(render_request_body(render_context(f.store, "s171", RenderOptions{}),
                                                           RenderFormat::responses)));
}

TEST(Codex171, UnknownRoleIsAWarningWithItsLineAndKept) {
  Fixture f;
  ImportResult r = f.import_text(
      "rollout-role.jsonl",
      R"({"type":"session_meta","payload":{"id":"role"}})" "\n"
      R"({"type":"response_item","payload":{"type":"message","role":"critic","content":[{"type":"input_text","text":"kept"}]}})" "\n"
      R"({"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}})" "\n");
  ASSERT_EQ(r.warnings.size(), 1u) << warnings_text(r);
  EXPECT_EQ(r.warnings[0].code, "record.unknown_role");
  EXPECT_EQ(r.warnings[0].line, 2);
  std::vector<Node> all = f.nodes("role");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].metadata["codex_role"], "critic");
  EXPECT_EQ(all[0].content[0]["text"], "kept");
}

TEST(Codex171, OlderRolloutsSendInstructions) {
  Fixture f;
  f.import_text("rollout-old.jsonl",
                R"({"type":"session_meta","payload":{"id":"old","base_instructions":{"text":"Be brief."}}})" "\n"
                R"({"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}})" "\n");
  Json body = render_request_body(render_context(f.store, "old", RenderOptions{}), RenderFormat::responses);
  EXPECT_EQ(body["instructions"], "Be brief.");
  ASSERT_EQ(body["input"].size(), 1u);
  EXPECT_EQ(body["input"][0]["role"], "user");
}

// Developer messages keep their role in every format: openai (system), anthropic (the leading
// system text, later ones in place), responses (developer), also inside an imported compaction.
const char* kCompacted171 =
    R"({"ordinal":0,"type":"session_meta","payload":{"id":"c171","base_instructions":{"text":"SYS","provenance":{"type":"model"}}}})" "\n"
    R"({"ordinal":1,"type":"event_msg","payload":{"type":"task_started","model_context_window":60000}})" "\n"
    R"({"ordinal":2,"type":"response_item","payload":{"type":"message","id":"d1","role":"developer","content":[{"type":"input_text","text":"DEV-ONE"}]}})" "\n"
    R"({"ordinal":3,"type":"response_item","payload":{"type":"message","id":"u1","role":"user","content":[{"type":"input_text","text":"inspect"}]}})" "\n"
    R"({"ordinal":4,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"k1"}})" "\n"
    R"({"ordinal":5,"type":"token_usage_record","payload":{"response_id":"resp_big","usage":{"input_tokens":25000,"output_tokens":30,"total_tokens":25030}}})" "\n"
    R"({"ordinal":6,"type":"response_item","payload":{"type":"function_call_output","call_id":"k1","output":"a.txt"}})" "\n"
    R"({"ordinal":7,"type":"response_item","payload":{"type":"message","id":"msg_sum","role":"assistant","content":[{"type":"output_text","text":"SUMMARY"}]},"metadata":{"compaction_output":true}})" "\n"
    R"({"ordinal":8,"type":"token_usage_record","payload":{"response_id":"resp_sum","usage":{"input_tokens":5000,"output_tokens":40,"total_tokens":5040}}})" "\n"
    R"({"ordinal":9,"type":"compacted","payload":{"message":"prefix SUMMARY","compaction_response_id":"resp_sum","latest_token_usage_record":{"usage":{"total_tokens":5040}},"replacement_history":[{"type":"message","id":"d2","role":"developer","content":[{"type":"input_text","text":"DEV-ONE"}]},{"type":"message","id":"u1","role":"user","content":[{"type":"input_text","text":"inspect"}]},{"type":"message","id":"u2","role":"user","content":[{"type":"input_text","text":"prefix SUMMARY"}]}]}})" "\n"
    R"({"ordinal":10,"type":"world_state","payload":{"full":true}})" "\n"
    R"({"ordinal":11,"type":"response_item","payload":{"type":"message","id":"d3","role":"developer","content":[{"type":"input_text","text":"DEV-TWO"}]}})" "\n"
    R"({"ordinal":12,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"more"}]}})" "\n";

TEST(Codex171, MidTurnCompactionRecordsTriggerAndMeasuredTokens) {
  Fixture f;
  ImportResult r = f.import_text("rollout-c.jsonl", kCompacted171);
  EXPECT_TRUE(r.warnings.empty()) << warnings_text(r);
  std::optional<Node> sum;
  for (const auto& n : f.nodes("c171"))
    if (n.kind == kind::kSummary) sum = n;
  ASSERT_TRUE(sum);
  const Json& cm = sum->metadata["compact_metadata"];
  EXPECT_EQ(sum->metadata["trigger"], "auto");
  EXPECT_EQ(cm["preTokens"], 25030);  // the last agent response, not the summarization's
  EXPECT_EQ(cm["pre_response_id"], "resp_big");
  EXPECT_EQ(cm["window"], 60000);
  EXPECT_EQ(cm["summary_usage"]["total_tokens"], 5040);
  EXPECT_EQ(sum->metadata["compaction_response_id"], "resp_sum");
}

TEST(Codex171, DeveloperRoleSurvivesEveryFormat) {
  Fixture f;
  f.import_text("rollout-c.jsonl", kCompacted171);
  Rendered r = render_context(f.store, "c171", RenderOptions{});
  Json resp = render_request_body(r, RenderFormat::responses);
  std::vector<std::string> roles;
  for (const auto& it : resp["input"]) roles.push_back(it.value("role", it.value("type", "")));
  // SYS, then the replacement history (DEV-ONE, inspect, summary), then DEV-TWO and "more".
  EXPECT_EQ(roles, (std::vector<std::string>{"developer", "developer", "user", "user", "developer", "user"}))
      << dump_json(resp);
  Json oa = render_request_body(r, RenderFormat::openai)["messages"];
  std::vector<std::string> dev_roles;
  for (const auto& m : oa) {
    std::string c = m["content"].is_string() ? m["content"].get<std::string>() : dump_json(m["content"]);
    if (c.find("DEV-") != std::string::npos) dev_roles.push_back(m["role"].get<std::string>());
  }
  EXPECT_EQ(dev_roles, (std::vector<std::string>{"system", "system"})) << dump_json(oa);
  Json an = render_request_body(r, RenderFormat::anthropic);
  EXPECT_NE(an["system"].get<std::string>().find("SYS"), std::string::npos);
  std::string msgs = dump_json(an["messages"]);
  EXPECT_NE(msgs.find(std::string(kMidSystemPrefix) + "DEV-TWO"), std::string::npos) << msgs;
}

// Every render of every shipped transcript: OpenAI chat tool-call ids are at most 40 bytes, each
// result names a call sent before it, and each shortened id maps back to a stored id.
TEST(OpenAIToolIds, WithinFortyBytesOnEveryShippedTranscript) {
  const fs::path root = CTXFOLD_TRANSCRIPTS_DIR;
  if (!fs::exists(root)) GTEST_SKIP() << "no transcripts at " << root;
  Fixture f;
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".jsonl" || ext == ".json") &&
        e.path().string().find("/subagents/") == std::string::npos)
      files.push_back(e.path().string());
  }
  ASSERT_GE(files.size(), 10u);
  for (const auto& p : files) import_paths(f.store, {p}, ImportOptions{});
  int sessions = 0, renders = 0, shortened = 0;
  for (const auto& s : f.store.sessions()) {
    if (!f.store.head(s.id)) continue;
    ++sessions;
    for (const char* strategy : {"rolling", "raw"}) {
      RenderOptions o;
      o.strategy = strategy;
      Rendered r = render_context(f.store, s.id, o);
      Json j = render_to_json(r, RenderFormat::openai);
      ++renders;
      std::set<std::string> stored, sent;
      for (const auto& it : r.items)
        for (const auto& b : it.content)
          if (b.is_object() && (b.value("type", "") == "tool_use")) stored.insert(b.value("id", ""));
      for (const auto& m : j["messages"]) {
        if (m.contains("tool_calls"))
          for (const auto& c : m["tool_calls"]) {
            std::string id = c["id"];
            EXPECT_LE(id.size(), 40u) << s.id << " " << id;
            sent.insert(id);
          }
        if (m["role"] == "tool") {
          std::string id = m["tool_call_id"];
          EXPECT_LE(id.size(), 40u) << s.id << " " << id;
          EXPECT_TRUE(sent.count(id)) << s.id << ": result for " << id << " before its call";
        }
      }
      if (j.contains("tool_call_ids"))
        for (const auto& e : j["tool_call_ids"]) {
          ++shortened;
          EXPECT_EQ(e["id"].get<std::string>().size(), 40u);
          EXPECT_GT(e["original"].get<std::string>().size(), 40u);
          EXPECT_TRUE(stored.count(e["original"].get<std::string>())) << e.dump();
          EXPECT_TRUE(sent.count(e["id"].get<std::string>())) << e.dump();
        }
      // The body is the same request the JSON shows.
      EXPECT_EQ(dump_json(render_request_body(r, RenderFormat::openai)["messages"]), dump_json(j["messages"]));
    }
  }
  EXPECT_GE(sessions, 8);
  EXPECT_GT(shortened, 0);  // the Gemini sessions' tool ids are longer than 40 bytes
}

}  // namespace
}  // namespace ctxfold
