// File and command events from tool calls (forensics/tool_events.hpp), per agent shape, from
// small constructed nodes; the bad-input cases stay unknown.
#include <gtest/gtest.h>

#include "forensics/tool_events.hpp"

namespace ctxfold {
namespace {

struct Feed {
  ToolEventCollector col;
  std::int64_t seq = 0;
  explicit Feed(const std::string& format, std::optional<std::string> cwd = std::nullopt)
      : col(format, std::move(cwd)) {}

  void call(const std::string& id, const std::string& name, Json input, Json meta = Json::object()) {
    Node n;
    n.seq = ++seq;
    n.id = "a" + std::to_string(seq);
    n.session = "s";
    n.role = role::kAssistant;
    n.content = Json::array({Json{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", std::move(input)}}});
    n.metadata = std::move(meta);
    col.add(n);
  }
  void result(const std::string& id, Json content, bool is_error = false, Json meta = Json::object()) {
    Node n;
    n.seq = ++seq;
    n.id = "r" + std::to_string(seq);
    n.session = "s";
    n.role = role::kTool;
    n.content = Json::array(
        {Json{{"type", "tool_result"}, {"tool_use_id", id}, {"content", std::move(content)}, {"is_error", is_error}}});
    n.metadata = std::move(meta);
    col.add(n);
  }
  std::pair<std::vector<FileEvent>, std::vector<CommandEvent>> done() {
    std::vector<FileEvent> f;
    std::vector<CommandEvent> c;
    col.finish(&f, &c);
    return {std::move(f), std::move(c)};
  }
};

TEST(ToolEventsClaude, EditsAreCheckedAgainstTheRecordedOriginalFile) {
  Feed f("claude-code", "/p");
  f.call("t1", "Edit", {{"file_path", "/p/a.ex"}, {"old_string", "foo"}, {"new_string", "bar"}});
  f.result("t1", "The file /p/a.ex has been updated.", false,
           {{"tool_use_result", {{"filePath", "/p/a.ex"}, {"originalFile", "x foo y"}, {"structuredPatch", Json::array()}}}});
  // The next edit's old string is not in the content the first edit left ("x bar y").
  f.call("t2", "Edit", {{"file_path", "a.ex"}, {"old_string", "foo"}, {"new_string", "baz"}});
  f.result("t2", "<tool_use_error>String to replace not found in file.\nString: foo</tool_use_error>", true);
  auto [files, cmds] = f.done();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(cmds.empty());
  EXPECT_EQ(files[0].action, "edit");
  EXPECT_EQ(files[0].call.result, "success");
  EXPECT_EQ(files[0].edit["old_string_found"], true);
  EXPECT_EQ(files[0].relative_path, std::optional<std::string>("a.ex"));
  EXPECT_EQ(files[1].path, std::optional<std::string>("/p/a.ex"));  // joined to the cwd
  EXPECT_EQ(files[1].call.result, "error");
  EXPECT_EQ(files[1].call.error, std::optional<std::string>("String to replace not found in file."));
  EXPECT_EQ(files[1].edit["old_string_found"], false);
}

TEST(ToolEventsClaude, ReadThenMultiEditChecksEachStringInTurnAndUnknownStaysNull) {
  Feed f("claude-code");
  f.call("r", "Read", {{"file_path", "/p/b.py"}});
  f.result("r", "     1\tone two", false,
           {{"tool_use_result", {{"type", "text"}, {"file", {{"filePath", "/p/b.py"}, {"content", "one two"},
                                                             {"startLine", 1}, {"numLines", 1}, {"totalLines", 1}}}}}});
  f.call("m", "MultiEdit", {{"file_path", "/p/b.py"},
                            {"edits", Json::array({Json{{"old_string", "one"}, {"new_string", "three"}},
                                                   Json{{"old_string", "one"}, {"new_string", "four"}}})}});
  f.result("m", "ok");
  f.call("u", "Edit", {{"file_path", "/p/never_read.py"}, {"old_string", "x"}, {"new_string", "y"}});
  f.result("u", "ok");
  auto [files, cmds] = f.done();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].action, "read");
  EXPECT_EQ(files[1].edit["edits"][0]["old_string_found"], true);
  EXPECT_EQ(files[1].edit["edits"][1]["old_string_found"], false);  // "one" became "three"
  EXPECT_TRUE(files[2].edit["old_string_found"].is_null());          // content never known
}

TEST(ToolEventsClaude, RejectionsHookBlocksWritesAndBash) {
  Feed f("claude-code");
  f.call("w", "Write", {{"file_path", "/p/new.txt"}, {"content", "hi\n"}});
  f.result("w", "File created", false, {{"tool_use_result", {{"type", "create"}, {"filePath", "/p/new.txt"}}}});
  f.call("x", "Edit", {{"file_path", "/p/new.txt"}, {"old_string", "hi"}, {"new_string", "ho"}});
  f.result("x", "The user doesn't want to proceed with this tool use. The tool use was rejected.", true,
           {{"tool_use_result", "User rejected tool use"}});
  f.call("b1", "Bash", {{"command", "mix test"}});
  f.result("b1", "Exit code 2\n3 tests, 1 failure", true, {{"tool_use_result", "Error: Exit code 2\n3 tests, 1 failure"}});
  f.call("b2", "Bash", {{"command", "ls   -la"}, {"run_in_background", true}});
  f.result("b2", "a\nb", false,
           {{"tool_use_result", {{"stdout", "a\nb"}, {"stderr", ""}, {"interrupted", false}}}});
  f.call("b3", "Bash", {{"command", "git push"}});
  f.result("b3", "blocked", true, {{"hook_blocked", Json::array({Json{{"tool_use_id", "b3"}}})}});
  f.call("b4", "Bash", {{"command", "sleep 100"}});  // no result ever
  auto [files, cmds] = f.done();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].action, "create");
  EXPECT_EQ(files[0].edit["bytes"], 3);
  EXPECT_EQ(files[1].call.result, "rejected");
  EXPECT_EQ(files[1].call.rejected_by, std::optional<std::string>("user"));
  EXPECT_EQ(files[1].edit["old_string_found"], true);  // the write made the content known
  ASSERT_EQ(cmds.size(), 4u);
  EXPECT_EQ(cmds[0].exit_code, std::optional<int>(2));
  EXPECT_EQ(cmds[0].call.result, "error");
  EXPECT_EQ(cmds[1].command, std::optional<std::string>("ls -la"));
  EXPECT_EQ(cmds[1].call.result, "success");
  EXPECT_FALSE(cmds[1].exit_code.has_value());  // success says nothing of an exit code: not guessed
  EXPECT_EQ(cmds[1].stdout_bytes, std::optional<std::int64_t>(3));
  EXPECT_TRUE(cmds[1].background);
  EXPECT_EQ(cmds[2].call.rejected_by, std::optional<std::string>("hook"));
  EXPECT_EQ(cmds[3].call.result, "unknown");
  EXPECT_FALSE(cmds[3].output_bytes.has_value());
}

TEST(ToolEventsCodex, ExecCommandShellReadsAndUnknownStatus) {
  Feed f("codex", "/w");
  f.call("c1", "exec_command", {{"cmd", "sed -n '1,40p' src/lib.rs"}, {"workdir", "/w/crate"}});
  f.result("c1", "Chunk ID: 1\nWall time: 0.0500 seconds\nProcess exited with code 0\nOutput:\nfn main() {}\n");
  f.call("c2", "exec_command", {{"cmd", "cargo build"}});
  f.result("c2", "Chunk ID: 2\nWall time: 10.0 seconds\nProcess running with session ID 7\nOutput:\n");
  f.call("c3", "shell", {{"command", Json::array({"bash", "-lc", "cat a.txt | wc -l"})}});
  f.result("c3", "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nExit code: 0\n");
  f.call("c4", "shell_command", {{"command", "cd sub && rm -f old.txt"}});
  f.result("c4", "no status here");
  auto [files, cmds] = f.done();
  ASSERT_EQ(cmds.size(), 4u);
  EXPECT_EQ(cmds[0].exit_code, std::optional<int>(0));
  EXPECT_EQ(cmds[0].duration_ms, std::optional<double>(50));
  EXPECT_EQ(cmds[0].call.result, "success");
  EXPECT_EQ(cmds[0].call.cwd, std::optional<std::string>("/w/crate"));
  EXPECT_FALSE(cmds[1].exit_code.has_value());  // still running: no exit status
  EXPECT_EQ(cmds[1].call.result, "unknown");
  EXPECT_EQ(cmds[2].command, std::optional<std::string>("cat a.txt | wc -l"));
  EXPECT_EQ(cmds[2].exit_code, std::optional<int>(1));  // the header's, not the output's
  EXPECT_EQ(cmds[3].call.result, "unknown");
  ASSERT_EQ(files.size(), 2u);  // the pipeline is not a plain read
  EXPECT_EQ(files[0].action, "read");
  EXPECT_EQ(files[0].via, "shell");
  EXPECT_EQ(files[0].path, std::optional<std::string>("/w/crate/src/lib.rs"));
  EXPECT_EQ(files[1].action, "delete");
  EXPECT_EQ(files[1].path, std::optional<std::string>("/w/sub/old.txt"));
}

TEST(ToolEventsCodex, ApplyPatchPerFileAndAPatchThatDoesNotParseIsUnknown) {
  Feed f("codex", "/w");
  const std::string patch =
      "*** Begin Patch\n*** Add File: n.md\n+hello\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Delete File: x.txt\n"
      "*** End Patch\n";
  f.call("p1", "apply_patch", {{"raw", patch}});
  f.result("p1", R"({"output":"Success. Updated the following files:\nA n.md\n","metadata":{"exit_code":0,"duration_seconds":0.25}})");
  f.call("p2", "apply_patch", {{"raw", "[REDACTED_INPUT len=2571 sha=adb0568c]"}});
  f.result("p2", "[REDACTED_OUTPUT len=192 sha=720c5f0f]");
  f.call("p3", "exec_command", {{"cmd", "apply_patch <<'EOF'\n" + patch + "EOF"}});
  f.result("p3", "Exit code: 1\nWall time: 0 seconds\nOutput:\napply_patch verification failed\n");
  auto [files, cmds] = f.done();
  ASSERT_EQ(files.size(), 7u);
  EXPECT_EQ(files[0].action, "create");
  EXPECT_EQ(files[0].edit["bytes"], 6);
  EXPECT_EQ(files[1].action, "edit");
  EXPECT_EQ(files[1].edit["removed"], 1);
  EXPECT_EQ(files[2].action, "delete");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(files[i].call.result, "success");
  EXPECT_EQ(files[3].action, "unknown");
  EXPECT_FALSE(files[3].path.has_value());
  EXPECT_EQ(files[3].edit["parsed"], false);
  EXPECT_EQ(files[3].call.result, "unknown");
  EXPECT_EQ(files[4].call.result, "error");
  ASSERT_EQ(cmds.size(), 1u);  // apply_patch as a tool is no shell command; inside exec_command it is
  EXPECT_EQ(cmds[0].exit_code, std::optional<int>(1));
}

TEST(ToolEventsGemini, StatusesExitCodesAndCancellation) {
  Feed f("gemini");
  f.call("g1", "read_file", {{"file_path", "gemini.md"}});
  f.result("g1", "File not found: gemini.md", true);
  f.call("g2", "read_file", {{"file_path", "/h/.zshrc"}});
  f.result("g2", "source x\n");
  f.call("g3", "replace", {{"file_path", "/h/.zshrc"}, {"old_string", "x"}, {"new_string", "y"}});
  f.result("g3", "Successfully modified file: /h/.zshrc (1 replacements).");
  f.call("g4", "run_shell_command", {{"command", "false"}});
  f.result("g4", "Command: false\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: 0");
  f.call("g5", "write_file", {{"file_path", "/h/n.txt"}, {"content", "n"}});
  f.result("g5", "[Operation Cancelled] Reason: User cancelled the operation.", true,
           {{"tool_calls", Json::array({Json{{"id", "g5"}, {"status", "cancelled"}}})}});
  auto [files, cmds] = f.done();
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].call.result, "error");
  EXPECT_EQ(files[0].path, std::optional<std::string>("gemini.md"));  // no cwd recorded: as written
  EXPECT_EQ(files[2].edit["old_string_found"], true);
  EXPECT_EQ(files[3].call.result, "rejected");
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(cmds[0].exit_code, std::optional<int>(1));
  EXPECT_EQ(cmds[0].call.result, "error");
}

// Cline's {query, result, success} records (docs/formats/cline.md "Tool results"), as the JSON
// text its importer stores: the call succeeds when every record did, a read's file takes its own.
TEST(ToolEventsCline, RecordsDecideTheResultFileByFile) {
  Feed f("cline", "/p");
  f.call("c1", "read_files", {{"files", Json::array({Json{{"path", "/p/a"}}, Json{{"path", "/p/missing"}}})}});
  f.result("c1", R"([{"query":"/p/a","result":"1 | alpha","success":true},)"
                 R"({"query":"/p/missing","result":"","error":"Error reading file: ENOENT","success":false}])");
  f.call("c2", "run_commands", {{"commands", Json::array({"echo hi", "false"})}});
  f.result("c2", R"([{"query":"echo hi","result":"hi\n","success":true},{"query":"false","result":"","error":"exit code 1","success":false}])");
  f.call("c3", "editor", {{"path", "/p/made.txt"}, {"new_text", "beta\n"}});
  f.result("c3", R"({"query":"edit:/p/made.txt","result":"Edited /p/made.txt","success":true})");
  f.call("c4", "run_commands", {{"commands", Json::array({"echo x"})}});
  f.result("c4", "not records");
  auto [files, cmds] = f.done();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].call.result, "success");
  EXPECT_EQ(files[1].call.result, "error");
  EXPECT_EQ(files[1].call.error, std::optional<std::string>("Error reading file: ENOENT"));
  EXPECT_EQ(files[2].action, "create");
  EXPECT_EQ(files[2].call.result, "success");
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0].call.result, "error");
  EXPECT_EQ(cmds[0].call.error, std::optional<std::string>("exit code 1"));
  EXPECT_FALSE(cmds[0].exit_code);  // Cline records no exit code
  EXPECT_EQ(cmds[1].call.result, "unknown");
}

TEST(ToolEvents, ARepeatedCallIsCountedOnceAndOpenAiResultsSayNothing) {
  Feed f("openai");
  f.call("t", "Bash", {{"command", "make"}});
  f.call("t", "Bash", {{"command", "make"}});
  f.result("t", "done");
  f.result("t", "done");
  auto [files, cmds] = f.done();
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(cmds[0].call.result, "unknown");  // no is_error signal in the format, no exit code
}

TEST(ToolEvents, PathsNormalizeAndMatch) {
  EXPECT_EQ(normalize_path("./src/../lib/a.c", std::string("/w")), "/w/lib/a.c");
  EXPECT_EQ(normalize_path("/a//b/./c", std::nullopt), "/a/b/c");
  EXPECT_EQ(normalize_path("C:\\x\\y", std::string("/w")), "C:\\x\\y");
  FileEvent e;
  e.path = "/w/lib/a.c";
  e.relative_path = "lib/a.c";
  EXPECT_TRUE(path_matches(e, "lib/a.c"));
  EXPECT_TRUE(path_matches(e, "./lib/a.c"));
  EXPECT_TRUE(path_matches(e, "a.c"));
  EXPECT_FALSE(path_matches(e, "b/a.c"));
  EXPECT_FALSE(path_matches(e, "/lib/a.c"));
}

}  // namespace
}  // namespace ctxfold
