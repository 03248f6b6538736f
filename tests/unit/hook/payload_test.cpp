// The hook payload: what ctxfold reads of the JSON an agent writes on a hook's stdin.
#include "hook/payload.hpp"

#include <gtest/gtest.h>

#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {
namespace {

std::string code_of(const std::string& text) {
  try {
    parse_hook_payload(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::bad_input) << e.what();
    return e.code();
  }
  return "ok";
}

TEST(HookPayload, ReadsTheFieldsOfEachEvent) {
  HookPayload p = parse_hook_payload(
      R"({"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"compact","model":"m"})");
  EXPECT_EQ(p.event, "SessionStart");
  EXPECT_EQ(p.session_id, "s1");
  EXPECT_EQ(p.transcript_path, "/t/s1.jsonl");
  EXPECT_EQ(p.cwd, "/p");
  EXPECT_EQ(p.source, "compact");
  p = parse_hook_payload(
      R"({"session_id":"s1","transcript_path":"/t","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null})");
  EXPECT_EQ(p.source, "auto");
  p = parse_hook_payload(R"({"session_id":"s1","transcript_path":"/t","hook_event_name":"SessionEnd","reason":"other"})");
  EXPECT_EQ(p.source, "other");
  p = parse_hook_payload(R"({"session_id":"s1","transcript_path":"/t","hook_event_name":"Stop","stop_hook_active":false})");
  EXPECT_EQ(p.source, "");
}

TEST(HookPayload, RefusesWhatIsNotAPayload) {
  EXPECT_EQ(code_of(""), "hook.payload");
  EXPECT_EQ(code_of("{\"session_id\": "), "hook.payload");
  EXPECT_EQ(code_of("[1,2]"), "hook.payload");
  EXPECT_EQ(code_of(R"({"session_id":"s","transcript_path":"/t"})"), "hook.field");
  EXPECT_EQ(code_of(R"({"transcript_path":"/t","hook_event_name":"Stop"})"), "hook.field");
  EXPECT_EQ(code_of(R"({"session_id":"s","transcript_path":7,"hook_event_name":"Stop"})"), "hook.field");
  EXPECT_EQ(code_of(R"({"session_id":"s","transcript_path":"","hook_event_name":"Stop"})"), "hook.field");
  EXPECT_EQ(code_of(R"({"session_id":"s","transcript_path":"/t","hook_event_name":"PreToolUse"})"), "hook.event");
}

TEST(HookPayload, NamesTheLineAndColumnOfBadJson) {
  try {
    parse_hook_payload("{\n  \"session_id\": \"s\",\n  oops\n}");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stdin:3:"), std::string::npos) << e.what();
  }
}

TEST(HookPayload, ATranscriptMayBeMissingOnlyBeforeTheFirstTurn) {
  auto p = [](const char* event, const char* field, const char* value) {
    Json j{{"session_id", "s"}, {"transcript_path", "/t"}, {"hook_event_name", event}, {field, value}};
    return parse_hook_payload(dump_json(j));
  };
  EXPECT_TRUE(transcript_optional(p("SessionStart", "source", "startup")));
  EXPECT_TRUE(transcript_optional(p("SessionStart", "source", "clear")));
  EXPECT_TRUE(transcript_optional(p("SessionEnd", "reason", "other")));
  EXPECT_FALSE(transcript_optional(p("SessionStart", "source", "compact")));
  EXPECT_FALSE(transcript_optional(p("SessionStart", "source", "resume")));
  EXPECT_FALSE(transcript_optional(p("PreCompact", "trigger", "manual")));
  EXPECT_FALSE(transcript_optional(p("Stop", "x", "y")));
}

}  // namespace
}  // namespace ctxfold
