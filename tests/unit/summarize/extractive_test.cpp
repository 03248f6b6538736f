// The built-in extractive summarizer and the summarizer transcript.
#include <gtest/gtest.h>

#include <csignal>

#include "summarize/command.hpp"
#include "summarize/extractive.hpp"
#include "summarize/transcript.hpp"
#include "tokens/estimate.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

std::string sample_transcript() {
  return "[user]\nPlease add a --dry-run flag to cmd/compact.cpp and keep the JSON schema stable.\n\n"
         "[assistant]\nI'll read the command file first, then add the flag.\n"
         "[tool call Bash id=T1] {\"command\":\"grep -n dry_run cmd/compact.cpp\"}\n\n"
         "[tool result id=T1, error]\ngrep: cmd/compact.cpp: No such file or directory\n\n"
         "[assistant]\nDecided to create the file instead; `CompactCliOptions` holds the flags.\n"
         "[tool call Write id=T2] {\"file_path\":\"/work/main/cmd/compact.cpp\",\"content\":\"...\"}\n\n"
         "[tool result id=T2]\nFile written\n\n"
         "[user]\nAlso run the tests with ctest -R rolling please.\n\n"
         "[assistant]\nRunning them now.\n"
         "[tool call Bash id=T3] {\"command\":\"ctest -R rolling --output-on-failure\"}\n\n"
         "[tool result id=T3]\n100% tests passed, 0 tests failed out of 22\n" +
         std::string(3000, ' ') + "\n";
}

TEST(Extractive, KeepsRequestsPathsCommandsErrorsAndDecisions) {
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = sample_transcript();
  req.max_output_tokens = 2000;
  SummaryResult r = ex.summarize(req);
  const std::string& s = r.text;
  EXPECT_EQ(r.model, "extractive");
  EXPECT_NE(s.find("### 1. Please add a --dry-run flag to cmd/compact.cpp"), std::string::npos) << s;
  EXPECT_NE(s.find("### 2. Also run the tests with ctest -R rolling please."), std::string::npos) << s;
  EXPECT_NE(s.find("Created: /work/main/cmd/compact.cpp (Write)"), std::string::npos) << s;
  EXPECT_NE(s.find("`grep -n dry_run cmd/compact.cpp` → failed"), std::string::npos) << s;
  EXPECT_NE(s.find("`ctest -R rolling --output-on-failure` → ok"), std::string::npos) << s;
  EXPECT_NE(s.find("grep: cmd/compact.cpp: No such file or directory"), std::string::npos) << s;
  // The first turn ends on a tool call: its last statement is kept, marked unfinished.
  EXPECT_NE(s.find("not finished in this history; last statement: Decided to create the file instead"),
            std::string::npos) << s;
  EXPECT_NE(s.find("CompactCliOptions"), std::string::npos);
  EXPECT_NE(s.find("Bash: 2"), std::string::npos);
  EXPECT_LT(s.size(), req.transcript.size());
}

TEST(Extractive, DeterministicAndStrictlySmaller) {
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = sample_transcript();
  req.max_output_tokens = 4096;
  EXPECT_EQ(ex.summarize(req).text, ex.summarize(req).text);
  // Tiny inputs too.
  for (std::string t : {std::string("[user]\nhi"), std::string("[user]\nfix src/a.cpp now please")}) {
    SummaryRequest small;
    small.transcript = t;
    std::string out = ex.summarize(small).text;
    EXPECT_LT(out.size(), t.size()) << t;
    EXPECT_FALSE(out.empty()) << t;
    EXPECT_TRUE(utf8_valid(out));
  }
  // One byte has no smaller non-empty summary: the input itself (callers judge the size).
  SummaryRequest one;
  one.transcript = "x";
  EXPECT_EQ(ex.summarize(one).text, "x");
}

// An lcm condensation input is its children's summaries under "[summary ID of rows A … B]"
// headers (strategies/lcm.cpp): their sections are merged, never dropped as unrecognised lines,
// and the result is never empty (the Codex rollout run stopped with "the summarizer returned an
// empty summary" when condensing four leaves).
TEST(Extractive, CondensesChildSummaries) {
  const std::string leaf1 = "## User requests\n- Please migrate the settings store to SQLite\n\n"
                            "## Decisions and progress\n- [REDACTED_TEXT len=1364 sha=4dc7c20d]\n";
  const std::string leaf2 = "## Decisions and progress\n- kept the old reader for one release\n\n"
                            "## Tools used\n- shell: 3\n" + std::string(2000, ' ') + "\n";
  std::string t = "[summary lcm-1 of rows r1 … r9]\n" + leaf1 + "\n\n[summary lcm-2 of rows r10 … r20]\n" + leaf2;
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = t;
  req.max_output_tokens = 512;
  std::string s = ex.summarize(req).text;
  EXPECT_NE(s.find("Please migrate the settings store to SQLite"), std::string::npos) << s;
  EXPECT_NE(s.find("kept the old reader for one release"), std::string::npos) << s;
  EXPECT_NE(s.find("shell: 3"), std::string::npos) << s;
  EXPECT_LT(s.size(), t.size());
}

// Regression (tester, lcm --window 8000): the leaf covering the latest user request said
// "## User requests - second ...", but its condensed parent listed only the first prompt and lost
// another leaf's "## Decisions and progress": over budget, the newest request went first (the
// first was protected, the one after it dropped) and a whole section could go. Condensing keeps
// every child's newest items, the first and the latest request, within the output limit.
TEST(Extractive, CondensingKeepsTheLatestRequestAndEveryChildsDecisions) {
  const std::string pad = " lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet"
                          " lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet";
  const std::string leaf1 = "## User requests\n- first prompt: please fix the parser in src/parse.cpp." + pad + pad +
                            pad + pad + "\n\n## Files\n- src/parse.cpp\n\n## Commands\n- cat src/parse.cpp\n\n"
                            "## Decisions and progress\n- I will read the parser.\n\n## Tools used\n- Bash: 1\n";
  const std::string leaf2 = "## Errors\n- error: parse.cpp:12: expected ';'" + pad + "\n";
  const std::string leaf3 = "## Decisions and progress\n- Decided to rewrite parse() with a table." + pad + "\n";
  const std::string leaf4 = "## User requests\n- second request: now add tests for the lexer in tests/lex_test.cpp." +
                            pad + pad + pad + pad + "\n\n## Decisions and progress\n- Adding the tests.\n";
  const std::string t = "[summary lcm-1 of rows u1 … r1]\n" + leaf1 + "\n\n[summary lcm-2 of rows a2 … a2]\n" + leaf2 +
                        "\n\n[summary lcm-3 of rows a3 … r3]\n" + leaf3 + "\n\n[summary lcm-4 of rows u2 … u2]\n" + leaf4;
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = t;
  req.max_output_tokens = 256;  // lcm's condensation limit at --window 8000: 1024 bytes
  std::string s = ex.summarize(req).text;
  EXPECT_LE(s.size(), 1024u) << s;
  EXPECT_NE(s.find("second request: now add tests for the lexer"), std::string::npos) << s;
  EXPECT_NE(s.find("first prompt: please fix the parser"), std::string::npos) << s;
  EXPECT_NE(s.find("Decided to rewrite parse() with a table"), std::string::npos) << s;
  EXPECT_NE(s.find("Adding the tests."), std::string::npos) << s;
  EXPECT_NE(s.find("expected ';'"), std::string::npos) << s;
  EXPECT_NE(s.find("src/parse.cpp"), std::string::npos) << s;
}

// A chunk holding nothing the extractor recognises within its budget (one redacted reply of a
// Codex rollout) still gets a non-empty summary: an excerpt.
TEST(Extractive, NeverEmptyForNonEmptyInput) {
  ExtractiveSummarizer ex;
  for (std::string t : {std::string("[assistant]\n[REDACTED_TEXT len=1364 sha=4dc7c20d]"),
                        std::string("[tool result id=T9]\n") + std::string(300, '.'),
                        std::string("[summary lcm-1 of rows a … b]\n- [REDACTED_TEXT len=9 sha=00000000]\n")}) {
    SummaryRequest req;
    req.transcript = t;
    req.max_output_tokens = 256;
    std::string out = ex.summarize(req).text;
    EXPECT_FALSE(out.empty()) << t;
    EXPECT_LT(out.size(), t.size()) << t;
    EXPECT_TRUE(utf8_valid(out));
  }
}

TEST(Extractive, RespectsTheOutputBudgetKeepingTheFirstRequest) {
  std::string t = "[user]\nTHE ORIGINAL TASK: migrate the database\n\n";
  for (int i = 0; i < 400; ++i)
    t += "[user]\nfollow-up number " + std::to_string(i) + " about file src/mod" + std::to_string(i) + ".cpp\n\n";
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = t;
  req.max_output_tokens = 300;
  std::string s = ex.summarize(req).text;
  EXPECT_LE(s.size(), 300u * 4);
  EXPECT_NE(s.find("THE ORIGINAL TASK"), std::string::npos);
  EXPECT_NE(s.find("follow-up number 399"), std::string::npos);  // newest kept
  EXPECT_EQ(s.find("follow-up number 3 "), std::string::npos);   // oldest dropped
}

TEST(Extractive, MergesAPreviousSummaryInPlace) {
  ExtractiveSummarizer ex;
  SummaryRequest first;
  first.transcript = sample_transcript();
  std::string prev = ex.summarize(first).text;
  SummaryRequest second;
  second.previous_summary = prev;
  second.transcript = "[user]\nnow deploy with make deploy\n\n[assistant]\nDeploying.\n" + std::string(2000, ' ');
  std::string merged = ex.summarize(second).text;
  EXPECT_NE(merged.find("Please add a --dry-run flag"), std::string::npos);
  EXPECT_NE(merged.find("now deploy with make deploy"), std::string::npos);
  // No duplicated headings; the earlier tasks come first.
  EXPECT_EQ(merged.find("## Tasks"), merged.rfind("## Tasks"));
  EXPECT_EQ(merged.find("## Identifiers"), merged.rfind("## Identifiers")) << merged;
  EXPECT_NE(merged.find("CompactCliOptions"), std::string::npos) << merged;
  EXPECT_LT(merged.find("### 1. Please add a --dry-run flag"), merged.find("### 3. now deploy with make deploy")) << merged;
  // Tool counts add up.
  EXPECT_NE(merged.find("Bash: 2"), std::string::npos);
  // A prose summary (imported) is kept as earlier summary lines.
  SummaryRequest third;
  third.previous_summary = "The user asked to port the parser.\nWe chose approach B.";
  third.transcript = "[user]\nnext step\n" + std::string(500, ' ');
  std::string s3 = ex.summarize(third).text;
  EXPECT_NE(s3.find("## Earlier summary"), std::string::npos);
  EXPECT_NE(s3.find("We chose approach B."), std::string::npos);
}

TEST(Extractive, GroupsPathsByFolderAndFoldsRelativeDuplicates) {
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript =
      "[user]\nlook at lib/a.ex and README.md\n\n"
      "[assistant]\nReading.\n"
      "[tool call Read id=T1] {\"file_path\":\"/home/u/p/lib/a.ex\"}\n"
      "[tool call Read id=T2] {\"file_path\":\"/home/u/p/lib/b.ex\"}\n\n"
      "[tool result id=T2]\nlib/c.ex is mentioned only in tool output\n" + std::string(3000, ' ');
  std::string s = ex.summarize(req).text;
  EXPECT_NE(s.find("- /home/u/p/lib/{a.ex, b.ex}\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("Root:"), std::string::npos) << s;  // two paths: not worth a root
  EXPECT_EQ(s.find("- lib/a.ex\n"), std::string::npos) << s;  // the tail of a listed path
  EXPECT_NE(s.find("- README.md\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("c.ex"), std::string::npos) << s;  // tool output is not a source of real paths
  // A grouped line merges back path by path: a later summary adds c.ex to the same group.
  SummaryRequest next;
  next.previous_summary = s;
  next.transcript = "[assistant]\nMore.\n[tool call Read id=T3] {\"file_path\":\"/home/u/p/lib/c.ex\"}\n" +
                    std::string(3000, ' ');
  std::string merged = ex.summarize(next).text;
  EXPECT_NE(merged.find("/home/u/p/lib/c.ex"), std::string::npos) << merged;
  EXPECT_NE(merged.find("a.ex, b.ex"), std::string::npos) << merged;
}

TEST(Extractive, OverBudgetKeepsPathsAndCommandsBeforeProse) {
  // 60 files and 30 commands, and much more prose than the budget: the identifiers survive.
  std::string t = "[user]\nread the modules\n\n";
  for (int i = 0; i < 60; ++i) {
    t += "[assistant]\n" + std::string(300, 'p') + " step " + std::to_string(i) + "\n";
    t += "[tool call Read id=R" + std::to_string(i) + "] {\"file_path\":\"src/m" + std::to_string(i) + ".cpp\"}\n";
    if (i % 2 == 0) t += "[tool call Bash id=B" + std::to_string(i) + "] {\"command\":\"make t" + std::to_string(i) + "\"}\n";
    t += "\n";
  }
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = t;
  // 2000 bytes: each command now carries its status ("`make t0` → no result"), ~12 bytes more
  // than the bare command the earlier layout listed at 1600.
  req.max_output_tokens = 500;
  std::string s = ex.summarize(req).text;
  EXPECT_LE(s.size(), 2000u);
  int files = 0, cmds = 0;
  for (int i = 0; i < 60; ++i) {
    if (s.find("m" + std::to_string(i) + ".cpp") != std::string::npos) ++files;
    if (i % 2 == 0 && s.find("`make t" + std::to_string(i) + "`") != std::string::npos) ++cmds;
  }
  EXPECT_EQ(files, 60) << s;
  EXPECT_EQ(cmds, 30) << s;
  EXPECT_NE(s.find("## Current state"), std::string::npos) << s;  // the prose keeps its place
}

TEST(Extractive, OnlyRealPathsAreListed) {
  // Markup in a written file, device paths in a command, a shebang: none is a file of the history.
  std::string t = "[user]\nfix the page in web/index.html\n\n[assistant]\nWriting it.\n"
                  "[tool call Write id=W] {\"content\":\"#!/usr/bin/env bash\\n<div><span>x</span></div>\",\"file_path\":\"/w/web/index.html\"}\n"
                  "[tool call Bash id=B] {\"command\":\"ls /nonexistent/dir 2>/dev/null\"}\n\n"
                  "[tool result id=B, error]\nls: cannot access '/nonexistent/dir': No such file or directory\n"
                  "/w/vendor/listed.css\n\n[assistant]\nDone: the page renders `<h1>` and the <span>x</span> tag.\n" +
                  std::string(2000, ' ');
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = t;
  std::string s = ex.summarize(req).text;
  EXPECT_NE(s.find("/w/web/index.html (Write)"), std::string::npos) << s;
  // Commands and statements are quoted as they were; the lists hold only real paths and names.
  const std::string lists = s.substr(s.find("## Files"));
  EXPECT_NE(lists.find("- /nonexistent/dir\n"), std::string::npos) << s;  // a command's argument
  for (const char* noise : {"/span", "/div", "/usr/bin/env", "/dev/null", "listed.css", "h1"})
    EXPECT_EQ(lists.find(noise), std::string::npos) << noise << "\n" << s;
}

TEST(Extractive, LeastSalientIdentifiersGoFirst) {
  // A long listing of files (in a tool result) against files the agent edited and commands it
  // ran: the edited files and run commands are listed, the listing never is.
  std::string t = "[user]\nfix it\n\n[assistant]\nOn it.\n";
  for (int i = 0; i < 5; ++i)
    t += "[tool call Edit id=E" + std::to_string(i) + "] {\"file_path\":\"/w/src/edited" + std::to_string(i) + ".cpp\"}\n";
  t += "[tool call Bash id=B] {\"command\":\"ls /w/vendor\"}\n\n[tool result id=B]\n";
  for (int i = 0; i < 200; ++i) t += "/w/vendor/listed" + std::to_string(i) + ".css\n";
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = t;
  req.max_output_tokens = 150;
  std::string s = ex.summarize(req).text;
  for (int i = 0; i < 5; ++i) EXPECT_NE(s.find("edited" + std::to_string(i) + ".cpp"), std::string::npos) << s;
  EXPECT_NE(s.find("ls /w/vendor"), std::string::npos) << s;
  EXPECT_EQ(s.find("listed0.css"), std::string::npos) << s;
  EXPECT_EQ(s.find("listed199.css"), std::string::npos) << s;
}

TEST(Extractive, ReadsLongerToolResultsThanAModel) {
  ExtractiveSummarizer ex;
  TranscriptOptions mine = ex.transcript_options(), model;
  EXPECT_GT(mine.max_tool_result_tokens, model.max_tool_result_tokens);
  Node r;
  r.role = role::kTool;
  std::string listing;
  for (int i = 0; i < 2000; ++i) listing += "dir/file" + std::to_string(i) + ".txt\n";
  r.content = Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "T"}, {"content", listing}}});
  EXPECT_EQ(node_transcript(r).find("file1000.txt"), std::string::npos);
  EXPECT_NE(node_transcript(r, mine).find("file1000.txt"), std::string::npos);
}

TEST(Extractive, EmptyInputFails) {
  ExtractiveSummarizer ex;
  SummaryRequest req;
  req.transcript = "  \n";
  EXPECT_THROW(ex.summarize(req), Error);
}

TEST(Transcript, TurnsNodesIntoSummarizerText) {
  Node a;
  a.id = "a";
  a.role = role::kAssistant;
  a.content = Json::array({Json{{"type", "thinking"}, {"thinking", "SECRET REASONING"}, {"signature", "sig"}},
                           Json{{"type", "opaque"}, {"provider", "openai"}, {"data", "ENCRYPTED"}},
                           Json{{"type", "text"}, {"text", "Let me look."}},
                           Json{{"type", "tool_use"}, {"id", "T1"}, {"name", "Read"}, {"input", {{"file_path", "a.py"}}}}});
  std::string t = node_transcript(a);
  EXPECT_EQ(t, "[assistant]\nLet me look.\n[tool call Read id=T1] {\"file_path\":\"a.py\"}");
  Node r;
  r.role = role::kTool;
  r.content = Json::array({Json{{"type", "tool_result"},
                                {"tool_use_id", "T1"},
                                {"is_error", true},
                                {"content", Json::array({Json{{"type", "text"}, {"text", std::string(20000, 'y')}},
                                                         Json{{"type", "image"}, {"media_type", "image/png"}, {"width", 800}, {"height", 600}, {"data", "AAAA"}}})}}});
  std::string rt = node_transcript(r);
  EXPECT_EQ(rt.rfind("[tool result id=T1, error]\n", 0), 0u);
  EXPECT_NE(rt.find("characters omitted"), std::string::npos);
  EXPECT_NE(rt.find("[image 800x600 omitted]"), std::string::npos);
  EXPECT_LT(rt.size(), 7000u);
  EXPECT_EQ(rt.find("AAAA"), std::string::npos);
  Node img;
  img.role = role::kUser;
  img.content = Json::array({Json{{"type", "image"}, {"media_type", "image/png"}, {"data", ""}}});  // corrupt
  EXPECT_EQ(node_transcript(img), "[user]\n[image omitted]");
}

TEST(Transcript, ShortenNeverCutsACharacter) {
  std::string s = std::string(1999, 'a') + "\xF0\x9F\x98\x80" + std::string(3000, 'b');  // astral at 2,000
  for (std::size_t max : {100u, 1000u, 2001u, 2003u}) {
    std::string out = shorten_middle(s, max);
    EXPECT_TRUE(utf8_valid(out)) << max;
    EXPECT_LE(out.size(), max + 8) << max;
  }
}

TEST(Transcript, FramingRoundTrips) {
  std::string raw = "## User requests\n- do it";
  std::string framed = frame_summary(raw);
  EXPECT_NE(framed.find("background"), std::string::npos);
  EXPECT_EQ(unframe_summary(framed), raw);
  EXPECT_EQ(unframe_summary("plain imported summary"), "plain imported summary");
}

TEST(CommandSummarizer, ReadsTheRequestOnStdinAndTheSummaryOnStdout) {
  testing_env::FakeEnvironment env;
  CommandSummarizer c("jq -r '\"S:\" + (.transcript|length|tostring) + \":\" + .prompt_version'",
                      std::chrono::milliseconds(20000), 1000, env);
  SummaryRequest req;
  req.transcript = "hello";
  EXPECT_EQ(c.summarize(req).text, "S:5:rolling-v2");
  CommandSummarizer js("cat >/dev/null; echo '{\"summary\":\"from json\"}'", std::chrono::milliseconds(20000), 1000, env);
  EXPECT_EQ(js.summarize(req).text, "from json");
}

TEST(CommandSummarizer, FailuresAreErrors) {
  testing_env::FakeEnvironment env;
  SummaryRequest req;
  req.transcript = "x";
  auto code_of = [&](const std::string& cmd, int ms = 20000) {
    CommandSummarizer c(cmd, std::chrono::milliseconds(ms), 1000, env);
    try {
      c.summarize(req);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit(), Exit::environment);
      return e.code();
    }
    return std::string("no error");
  };
  EXPECT_EQ(code_of("echo boom >&2; exit 3"), "summarizer.command");
  EXPECT_EQ(code_of("cat >/dev/null"), "summarizer.empty");
  EXPECT_EQ(code_of("printf '\\377\\376'"), "summarizer.malformed");
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(code_of("sleep 5; echo late", 300), "summarizer.timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4));
  EXPECT_EQ(code_of("/nonexistent/program"), "summarizer.command");
  // Does not read stdin at all: no SIGPIPE kills us.
  CommandSummarizer quick("echo done", std::chrono::milliseconds(20000), 1000, env);
  SummaryRequest big;
  big.transcript = std::string(1 << 20, 'z');
  EXPECT_EQ(quick.summarize(big).text, "done");
}

// A stop signal while the command runs (driven by the test's environment, not a real signal):
// the command's process group is stopped, the interruption is reported, and the process would end
// as the signal does (the fake's die throws instead of exiting).
TEST(CommandSummarizer, AStopSignalStopsTheCommandAndEndsTheProcess) {
  testing_env::FakeEnvironment env;
  env.stop_signal = SIGTERM;
  env.stop_after_waits = 2;
  CommandSummarizer c("sleep 30", std::chrono::milliseconds(60000), 1000, env);
  SummaryRequest req;
  req.transcript = "x";
  const auto t0 = std::chrono::steady_clock::now();
  try {
    c.summarize(req);
    FAIL() << "summarize returned after a stop signal";
  } catch (const testing_env::Died& d) {
    EXPECT_EQ(d.signal, SIGTERM);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));  // not the 30 s sleep
  ASSERT_EQ(env.diagnostics.size(), 1u);
  EXPECT_NE(env.diagnostics[0].find("interrupted by SIGTERM while summarizer command 'sleep 30' ran"),
            std::string::npos)
      << env.diagnostics[0];
}

TEST(CommandSummarizer, SettingsComeFromTheEnvironment) {
  testing_env::FakeEnvironment env;
  env.set("CTXFOLD_SUMMARIZER_WINDOW", "777");
  EXPECT_EQ(CommandSummarizer("cat", env).window_tokens(), 777);
  env.set("CTXFOLD_SUMMARIZER_TIMEOUT_MS", "soon");
  EXPECT_THROW(CommandSummarizer("cat", env), Error);
}

TEST(LocalSummarizers, Specs) {
  testing_env::FakeEnvironment env;
  EXPECT_EQ(make_local_summarizer("extractive", env)->kind(), "extractive");
  EXPECT_EQ(make_local_summarizer("command:cat", env)->kind(), "command");
  EXPECT_EQ(make_local_summarizer("command:cat", env)->model(), "cat");
  EXPECT_EQ(make_local_summarizer("openai:gpt-4o", env), nullptr);
  EXPECT_THROW(make_local_summarizer("command:", env), Error);
}

}  // namespace
}  // namespace ctxfold
