// ctxfold eval (docs/eval.md): probe files, scoring, generated probes, recorded answers, and a run
// over a constructed session with a deterministic answerer.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include "eval/answers.hpp"
#include "eval/eval.hpp"
#include "eval/generate.hpp"
#include "eval/probes.hpp"
#include "fake_environment.hpp"
#include "session_fixture.hpp"
#include "summarize/extractive.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

using testing_env::FakeEnvironment;

std::string error_of(const std::function<void()>& f, std::string* code = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "(no error)";
}

TEST(EvalProbes, ParsesLinesAndSkipsBlankOnes) {
  std::vector<Probe> ps = parse_probes(
      "{\"id\":\"a\",\"class\":\"file\",\"question\":\"Which file?\",\"expect\":[\"x.cpp\",\"y\"]}\n"
      "\n"
      "{\"id\":\"b\",\"class\":\"next_step\",\"question\":\"Next?\",\"expect\":\"run tests\",\"terms\":[\"tests\"]}\n",
      "p.jsonl");
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].id, "a");
  EXPECT_EQ(ps[0].klass, ProbeClass::file);
  EXPECT_EQ(ps[0].expect, (std::vector<std::string>{"x.cpp", "y"}));
  EXPECT_EQ(ps[0].where, "p.jsonl:1");
  EXPECT_EQ(ps[1].klass, ProbeClass::next_step);
  EXPECT_EQ(ps[1].expect, (std::vector<std::string>{"run tests"}));
  EXPECT_EQ(ps[1].terms, (std::vector<std::string>{"tests"}));
  EXPECT_EQ(ps[1].where, "p.jsonl:3");
  EXPECT_EQ(probe_to_json(ps[1])["terms"][0], "tests");
  EXPECT_FALSE(probe_to_json(ps[0]).contains("terms"));
  // What `eval --generate` prints reads back: "type":"probe" records and the closing summary.
  std::vector<Probe> stream = parse_probes(
      "{\"type\":\"probe\",\"id\":\"a\",\"class\":\"command\",\"question\":\"q\",\"expect\":[\"x\"]}\n"
      "{\"type\":\"summary\",\"schema\":\"ctxfold.eval-probes/1\",\"probes\":1}\n",
      "g.jsonl");
  ASSERT_EQ(stream.size(), 1u);
  EXPECT_EQ(stream[0].klass, ProbeClass::command);
}

TEST(EvalProbes, BadLinesNameFileAndLine) {
  const std::string good = "{\"id\":\"a\",\"class\":\"file\",\"question\":\"q\",\"expect\":[\"x\"]}\n";
  struct Case {
    std::string line, says;
  };
  const std::vector<Case> cases = {
      {"{not json", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {"{\"id\":\"b\",\"class\":\"weather\",\"question\":\"q\",\"expect\":[\"x\"]}", "unknown class 'weather'"},
      {"{\"id\":\"b\",\"class\":\"file\",\"question\":\"q\",\"expect\":[]}", "\"expect\" is empty"},
      {"{\"id\":\"b\",\"class\":\"file\",\"question\":\"q\",\"expect\":[\"  \"]}", "blank string"},
      {"{\"id\":\"b\",\"class\":\"file\",\"question\":\"q\"}", "missing \"expect\""},
      {"{\"id\":\"b\",\"class\":\"file\",\"question\":\"q\",\"expect\":[1]}", "strings only"},
      {"{\"id\":\"b\",\"class\":\"file\",\"question\":\"q\",\"expect\":[\"x\"],\"expected\":[\"x\"]}", "unknown key \"expected\""},
      {"{\"id\":\"a\",\"class\":\"file\",\"question\":\"q\",\"expect\":[\"x\"]}", "probe id 'a' is used twice"},
  };
  for (const Case& c : cases) {
    std::string code;
    std::string msg = error_of([&] { parse_probes(good + "\n" + c.line + "\n", "probes.jsonl"); }, &code);
    EXPECT_EQ(code, "eval.probe") << c.line;
    EXPECT_NE(msg.find("probes.jsonl:3: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
  }
  EXPECT_NE(error_of([] { parse_probes("\n  \n", "e.jsonl"); }).find("e.jsonl: no probes"), std::string::npos);
}

TEST(EvalScoring, CaseAndWhitespaceInsensitiveEveryStringRequired) {
  EXPECT_TRUE(answer_correct("The file is  SRC/Parser.CPP\n(edited twice)", {"src/parser.cpp"}));
  EXPECT_TRUE(answer_correct("exit   status\n\t1", {"Exit status 1"}));
  EXPECT_TRUE(answer_correct("Die STRASSE", {"straße"}));  // Unicode case folding, not ASCII only
  EXPECT_FALSE(answer_correct("src/parser.cpp", {"parser.cpp", "lexer.cpp"}));
  EXPECT_TRUE(answer_correct("parser.cpp and lexer.cpp", {"parser.cpp", "lexer.cpp"}));
  EXPECT_FALSE(answer_correct("anything", {}));
  EXPECT_FALSE(answer_correct("exit status1", {"exit status 1"}));  // a space is not optional
  EXPECT_EQ(normalize_for_scoring("  A\n\n b\tC  "), "a b c");
}

TEST(EvalScoring, RecallTermsFromBackticksQuotesThenLongWords) {
  Probe p;
  p.question = "Which file was edited to add `parse_widget`? See \"the request\" and `parse_widget` again";
  EXPECT_EQ(recall_terms(p), (std::vector<std::string>{"parse_widget", "the request"}));
  p.question = "What is the next step at the end of this history?";
  EXPECT_EQ(recall_terms(p), (std::vector<std::string>{"history"}));
  p.terms = {"alpha", "beta", "gamma", "delta"};
  EXPECT_EQ(recall_terms(p), (std::vector<std::string>{"alpha", "beta", "gamma"}));
}

TEST(EvalAnswers, RoundTripAndBadLines) {
  AnswerBook b;
  b.add({{"command:./a.sh", "d1", "q1"}, "p1", "full", "src/x.cpp"});
  b.add({{"command:./a.sh", "d2", "q1"}, "p1", "rolling", "not in the context"});
  AnswerBook back = AnswerBook::parse(b.to_jsonl(), "a.jsonl");
  EXPECT_EQ(back.size(), 2u);
  EXPECT_EQ(back.find({"command:./a.sh", "d1", "q1"}), std::optional<std::string>("src/x.cpp"));
  EXPECT_EQ(back.find({"command:./a.sh", "d3", "q1"}), std::nullopt);
  EXPECT_EQ(back.find({"openai:gpt", "d1", "q1"}), std::nullopt);
  EXPECT_EQ(back.models(), (std::vector<std::string>{"command:./a.sh"}));
  EXPECT_EQ(back.to_jsonl(), b.to_jsonl());
  std::string code;
  std::string msg = error_of([&] { AnswerBook::parse(b.to_jsonl() + "{\"schema\":\"other\"}\n", "a.jsonl"); }, &code);
  EXPECT_EQ(code, "eval.answers");
  EXPECT_NE(msg.find("a.jsonl:3:"), std::string::npos) << msg;
}

TEST(EvalContext, FitCutsTheMiddleOnlyWhenOverTheWindow) {
  std::string text = "HEAD " + words(40000) + " TAIL";
  bool cut = true;
  EXPECT_EQ(fit_context(text, 1000000, &cut), text);
  EXPECT_FALSE(cut);
  std::string small = fit_context(text, 4000, &cut);
  EXPECT_TRUE(cut);
  EXPECT_LT(small.size(), text.size());
  EXPECT_EQ(small.rfind("HEAD", 0), 0u);
  EXPECT_EQ(small.substr(small.size() - 4), "TAIL");
}

/// A session of three requests: the first edits a file and commits, the second runs a command
/// with a distinctive output, the third ends with a next step.
class EvalSession : public SessionTest {
 protected:
  void build(int filler_turns) {
    user("u1", "Please add the widget parser to the project");
    add("a1", role::kAssistant,
        Json::array({Json{{"type", "text"}, {"text", "Adding it."}},
                     Json{{"type", "tool_use"},
                          {"id", "t1"},
                          {"name", "Edit"},
                          {"input", {{"file_path", "/home/u/proj/src/widget_parser.cpp"},
                                     {"old_string", "int main() {}"},
                                     {"new_string", "int parse_widget_spec(const char* s) { return 0; }\nint main() {}"}}}}}));
    tool("r1", {"t1"}, "The file has been updated.");
    add("a2", role::kAssistant,
        Json::array({Json{{"type", "tool_use"},
                          {"id", "t2"},
                          {"name", "Bash"},
                          {"input", {{"command", "git commit -m \"Add the widget spec parser\""}}}}}));
    tool("r2", {"t2"}, "[main 1234abc] Add the widget spec parser\n 1 file changed");
    assistant("a3", "Implemented the parser and committed everything successfully.");
    for (int i = 0; i < filler_turns; ++i) {
      user(fmt::format("fu{}", i), fmt::format("filler request {} {}", i, words(2000)));
      assistant(fmt::format("fa{}", i), fmt::format("filler answer {} {}", i, words(2000)));
    }
    user("u2", "Now measure the benchmark please");
    add("a4", role::kAssistant,
        Json::array({Json{{"type", "tool_use"}, {"id", "t4"}, {"name", "Bash"}, {"input", {{"command", "make bench"}}}}}));
    tool("r4", {"t4"}, "\nthroughput: 4711 widgets per second\nok");
    assistant("a5", "Measured the benchmark throughput.");
    for (int i = 0; i < filler_turns; ++i) {
      user(fmt::format("gu{}", i), fmt::format("later request {} {}", i, words(2000)));
      assistant(fmt::format("ga{}", i), fmt::format("later answer {} {}", i, words(2000)));
    }
    user("u3", "What remains?");
    assistant("a6", "Next I will document the throughput measurement in the changelog.");
  }

  std::vector<Node> spine() {
    RenderOptions ro;
    ro.strategy = "raw";
    return render_context(st(), "s", ro).items;
  }
};

const Probe* find_class(const std::vector<Probe>& ps, ProbeClass c) {
  for (const Probe& p : ps)
    if (p.klass == c) return &p;
  return nullptr;
}

TEST_F(EvalSession, GeneratesOneProbeOfEachClassFromTheHistory) {
  build(0);
  std::vector<Probe> ps = generate_probes(spine());
  const Probe* f = find_class(ps, ProbeClass::file);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->id, "gen-file-1");
  EXPECT_EQ(f->question, "Which file was edited to add `parse_widget_spec`?");
  EXPECT_EQ(f->expect, (std::vector<std::string>{"widget_parser.cpp"}));
  // Both commands ran once and printed a first line the command does not hold: both are asked.
  std::vector<const Probe*> commands;
  for (const Probe& p : ps)
    if (p.klass == ProbeClass::command) commands.push_back(&p);
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0]->question, "What was the first line of output of the command `git commit -m \"Add the widget spec parser\"`?");
  EXPECT_EQ(commands[0]->expect, (std::vector<std::string>{"[main 1234abc] Add the widget spec parser"}));
  EXPECT_EQ(commands[1]->question, "What was the first line of output of the command `make bench`?");
  EXPECT_EQ(commands[1]->expect, (std::vector<std::string>{"throughput: 4711 widgets per second"}));  // the blank first line skipped
  const Probe* d = find_class(ps, ProbeClass::decision);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->question.find("commit message"), std::string::npos) << d->question;
  EXPECT_NE(d->question.find("\"Please add the widget parser to the project\""), std::string::npos);
  EXPECT_EQ(d->expect, (std::vector<std::string>{"Add the widget spec parser"}));
  const Probe* n = find_class(ps, ProbeClass::next_step);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->expect, (std::vector<std::string>{"measurement", "throughput"}));
  // Deterministic.
  std::vector<Probe> again = generate_probes(spine());
  ASSERT_EQ(again.size(), ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(probe_to_json(again[i]), probe_to_json(ps[i]));
}

TEST_F(EvalSession, PerClassSpreadsOverTheHistory) {
  build(0);
  GenerateOptions g;
  g.per_class = 1;
  std::vector<Probe> ps = generate_probes(spine(), g);
  for (ProbeClass c : probe_classes())
    EXPECT_LE(std::count_if(ps.begin(), ps.end(), [&](const Probe& p) { return p.klass == c; }), 1) << probe_class_name(c);
}

/// Answers by looking for each expected string in the context: right exactly when the context
/// holds every one of them (what a perfect reader of that context would answer).
class OracleAnswerer : public Answerer {
 public:
  std::vector<std::string> contexts;
  std::string model() const override { return "oracle:1"; }
  std::int64_t window_tokens() const override { return 10000000; }
  std::string answer(const Probe& p, const std::string& context, const std::string& text, const std::string&) override {
    contexts.push_back(context);
    std::string out;
    for (const std::string& e : p.expect)
      if (normalize_for_scoring(text).find(normalize_for_scoring(e)) != std::string::npos) out += e + "\n";
    return out.empty() ? "not in the context" : out;
  }
};

TEST_F(EvalSession, EveryStrategyIsAskedAndTheFullHistoryAnswersWhatCompactionsLose) {
  build(6);
  const std::int64_t before = st().node_count("s");
  std::vector<Probe> probes = generate_probes(spine());
  ASSERT_GE(probes.size(), 4u);
  OracleAnswerer oracle;
  ExtractiveSummarizer ex;
  FakeEnvironment env;
  EvalOptions eo;
  eo.env = &env;
  eo.strategy_options.rolling.window = 8000;
  eo.strategy_options.lcm.window = 8000;
  eo.strategy_options.snapcompact.window = 8000;
  EvalReport r = run_eval(st(), "s", probes, oracle, ex, eo);
  EXPECT_EQ(st().node_count("s"), before);  // the session's database is only read
  std::vector<std::string> names;
  for (const EvalContext& c : r.contexts) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"full", "rolling", "rolling+recall", "lcm", "lcm+recall", "snapcompact",
                                             "snapcompact+recall"}));
  EXPECT_EQ(r.answers.size(), probes.size() * names.size());
  const EvalContext& full = r.contexts[0];
  EXPECT_EQ(full.all.correct, full.all.total);  // every generated probe is answerable from the history
  for (const EvalContext& c : r.contexts) {
    if (c.name == "full") continue;
    EXPECT_EQ(json_str(c.compaction, "status"), "compacted") << c.name << " " << c.compaction.dump();
    // snapcompact's archive read as text is about the size of what it archived (its frames are
    // what is small); the text summaries are smaller than the history.
    if (c.strategy != "snapcompact") EXPECT_LT(c.tokens, full.tokens) << c.name;
  }
  // The command's output line was evicted: the rolling summary does not quote tool output, and
  // recall brings it back.
  auto answer_of = [&](const std::string& ctx, ProbeClass k) {
    for (const EvalAnswer& a : r.answers)
      if (a.context == ctx && a.klass == k) return a.correct;
    return false;
  };
  EXPECT_FALSE(answer_of("rolling", ProbeClass::command));
  EXPECT_TRUE(answer_of("rolling+recall", ProbeClass::command));
  EXPECT_TRUE(answer_of("rolling", ProbeClass::next_step));  // the newest turn stays in the tail
  Json j = eval_to_json(r);
  EXPECT_EQ(j["schema"], "ctxfold.eval/1");
  EXPECT_EQ(j["contexts"].size(), names.size());
  for (const Json& c : j["contexts"])
    for (ProbeClass k : probe_classes()) EXPECT_TRUE(c["by_class"].contains(probe_class_name(k))) << c.dump();
  EXPECT_NE(eval_to_text(r).find("rolling+recall"), std::string::npos);
}

TEST_F(EvalSession, ReplayWithoutTheAnswerNamesTheProbe) {
  build(0);
  std::vector<Probe> probes = generate_probes(spine());
  AnswerBook empty;
  std::unique_ptr<Answerer> a = replay_answerer(empty, "command:x", "answers.jsonl");
  ExtractiveSummarizer ex;
  FakeEnvironment env;
  EvalOptions eo;
  eo.env = &env;
  eo.strategies = {"rolling"};
  std::string code;
  std::string msg = error_of([&] { run_eval(st(), "s", probes, *a, ex, eo); }, &code);
  EXPECT_EQ(code, "eval.replay_missing");
  EXPECT_NE(msg.find("probe '" + probes[0].id + "' (generated)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("answers.jsonl"), std::string::npos) << msg;
  eo.strategies = {"rolling", "weather"};
  EXPECT_EQ((error_of([&] { run_eval(st(), "s", probes, *a, ex, eo); }, &code), code), "compact.strategy");
}

TEST(EvalModel, TheOfflineSummarizersAnswerNoQuestion) {
  FakeEnvironment env;
  std::string code;
  error_of([&] { model_answerer("extractive", env, nullptr); }, &code);
  EXPECT_EQ(code, "eval.model");
  error_of([&] { model_answerer("replay:/tmp", env, nullptr); }, &code);
  EXPECT_EQ(code, "eval.model");
  EXPECT_EQ(model_answerer("command:cat", env, nullptr)->model(), "command:cat");
}

TEST(EvalModel, ACommandModelGetsTheQuestionThroughTheSummarizerInterfaceAndIsRedacted) {
  FakeEnvironment env;
  env.set("MY_SERVICE_TOKEN", "tok-0123456789abcdef");
  AnswerBook book;
  std::unique_ptr<Answerer> a = model_answerer(
      "command:python3 -c \"import json,sys; r=json.load(sys.stdin); "
      "print(r['prompt_version'], r['max_output_tokens'], r['instructions'], r['transcript'][:5], 'tok-0123456789abcdef')\"",
      env, &book);
  Probe p;
  p.id = "p1";
  p.question = "Which file?";
  std::string answer = a->answer(p, "full", "HELLO world", "digest1");
  EXPECT_EQ(answer, "eval-answer-v1 512 Which file? HELLO [redacted]");
  EXPECT_EQ(book.find({a->model(), "digest1", "Which file?"}), std::optional<std::string>(answer));
}

}  // namespace
}  // namespace ctxfold
