// The hooks `ctxfold hook install` merges into Claude Code's settings and `uninstall` removes.
#include "hook/settings.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../temp_dir.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

const std::string kCmd = "/usr/bin/ctxfold --db /a/archive.db hook claude-code";

Json other_settings() {
  return parse_json(R"({"model":"opus","env":{"X":"1"},"futureKey":{"a":[1,2]},
    "hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}],
             "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard.sh"}]}]}})");
}

TEST(HookSettings, InstallKeepsEverythingAndAddsOneHookPerEvent) {
  Json after = add_hooks(other_settings(), kCmd, "claude-code");
  EXPECT_EQ(after["model"], "opus");
  EXPECT_EQ(after["futureKey"], other_settings()["futureKey"]);
  EXPECT_EQ(after["hooks"]["PreToolUse"], other_settings()["hooks"]["PreToolUse"]);
  ASSERT_EQ(after["hooks"]["Stop"].size(), 2u);
  EXPECT_EQ(after["hooks"]["Stop"][0], other_settings()["hooks"]["Stop"][0]);
  EXPECT_EQ(after["hooks"]["Stop"][1]["hooks"][0]["command"], kCmd);
  for (const char* e : {"PreCompact", "SessionStart", "SessionEnd"}) {
    ASSERT_EQ(after["hooks"][e].size(), 1u) << e;
    EXPECT_EQ(after["hooks"][e][0]["hooks"][0]["command"], kCmd) << e;
  }
  EXPECT_EQ(after["hooks"]["SessionStart"][0]["matcher"], "");
}

TEST(HookSettings, InstallingTwiceAddsNothing) {
  Json once = add_hooks(other_settings(), kCmd, "claude-code");
  Json twice = add_hooks(once, kCmd, "claude-code");
  EXPECT_EQ(settings_text(once), settings_text(twice));
}

TEST(HookSettings, InstallReplacesAnEarlierArchive) {
  Json once = add_hooks(other_settings(), kCmd, "claude-code");
  const std::string moved = "'/opt/ctxfold' --db '/b/my archive.db' hook claude-code";
  Json again = add_hooks(once, moved, "claude-code");
  ASSERT_EQ(again["hooks"]["PreCompact"].size(), 1u);
  EXPECT_EQ(again["hooks"]["PreCompact"][0]["hooks"][0]["command"], moved);
  EXPECT_EQ(again["hooks"]["Stop"].size(), 2u);
}

TEST(HookSettings, UninstallRemovesExactlyWhatInstallAdded) {
  for (const Json& start : {other_settings(), Json::object()}) {
    int removed = 0;
    Json back = remove_hooks(add_hooks(start, kCmd, "claude-code"), "claude-code", removed);
    EXPECT_EQ(removed, 4);
    EXPECT_EQ(settings_text(back), settings_text(start));
  }
  int removed = 0;
  Json none = remove_hooks(other_settings(), "claude-code", removed);
  EXPECT_EQ(removed, 0);
  EXPECT_EQ(none, other_settings());
}

TEST(HookSettings, OnlyCtxfoldHooksOfTheAgentAreOurs) {
  EXPECT_TRUE(is_ctxfold_hook(kCmd, "claude-code"));
  EXPECT_TRUE(is_ctxfold_hook("'/x y/ctxfold' --db '/a b.db' hook claude-code", "claude-code"));
  EXPECT_FALSE(is_ctxfold_hook(kCmd, "codex"));
  EXPECT_FALSE(is_ctxfold_hook("mytool hook claude-code", "claude-code"));
  EXPECT_FALSE(is_ctxfold_hook("ctxfold --db x grep hook", "claude-code"));
}

TEST(HookSettings, RefusesSettingsItCannotParseNamingTheLine) {
  auto code = [](const std::string& text, std::string* msg = nullptr) {
    try {
      parse_settings_text(text, "/h/settings.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit(), Exit::bad_input);
      if (msg) *msg = e.what();
      return e.code();
    }
    return std::string("ok");
  };
  std::string msg;
  EXPECT_EQ(code("{\n  // a comment\n  \"model\": \"x\"\n}", &msg), "settings.invalid");
  EXPECT_NE(msg.find("/h/settings.json:2:"), std::string::npos) << msg;
  EXPECT_EQ(code("{\"a\": 1,}"), "settings.invalid");
  EXPECT_EQ(code("[]"), "settings.invalid");
  EXPECT_EQ(code(R"({"hooks": []})"), "settings.invalid");
  EXPECT_EQ(code(R"({"hooks": {"Stop": {}}})"), "settings.invalid");
  EXPECT_EQ(code("  \n"), "ok");
  EXPECT_EQ(code(R"({"unknown": {"deep": [null]}})"), "ok");
}

TEST(HookSettings, WriteKeepsABackupOfTheOldFile) {
  TempDir dir("hook-settings");
  const std::string path = dir.write("settings.json", "{\"model\": \"opus\"}\n");
  write_settings(path, "{\"new\": true}\n", path + ".bak");
  std::ifstream a(path), b(path + ".bak");
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  EXPECT_EQ(sa.str(), "{\"new\": true}\n");
  EXPECT_EQ(sb.str(), "{\"model\": \"opus\"}\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".ctxfold-tmp"));
  // A new file in a folder that does not exist yet.
  write_settings(dir.path("p/.claude/settings.json"), "{}\n", std::nullopt);
  EXPECT_TRUE(std::filesystem::exists(dir.path("p/.claude/settings.json")));
}

}  // namespace
}  // namespace ctxfold
