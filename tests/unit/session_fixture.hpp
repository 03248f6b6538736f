// Shared by the compaction tests: a scripted summarizer and a fixture that builds one session
// ("s") node by node in a fresh database.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "store/store.hpp"
#include "summarize/summarizer.hpp"
#include "session/open.hpp"

namespace ctxfold {

/// A summarizer scripted by the test: `fn` answers each request (and may touch the database).
class FakeSummarizer : public Summarizer {
 public:
  std::function<std::string(const SummaryRequest&, int call)> fn;
  std::int64_t window = 100000;
  std::vector<SummaryRequest> requests;
  std::string kind() const override { return "fake"; }
  std::string model() const override { return "fake-1"; }
  std::int64_t window_tokens() const override { return window; }
  SummaryResult summarize(const SummaryRequest& req) override {
    requests.push_back(req);
    SummaryResult r;
    r.text = fn(req, static_cast<int>(requests.size()));
    r.model = "fake-1";
    return r;
  }
};

/// Filler text of `bytes` bytes whose token estimate is about bytes/4: four-letter words and a
/// space (one word per 5 bytes; TextWeights::word = 1.25), so window sizes in tests keep the
/// proportions they were written with.
inline std::string words(std::size_t bytes, char c = 'x') {
  std::string s;
  while (s.size() < bytes) {
    s.append(4, c);
    s.push_back(' ');
  }
  s.resize(bytes);
  return s;
}

/// A fresh database (removed afterwards) holding session "s"; add/user/assistant/tool append a
/// node extending the last one and move HEAD to it.
class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ctxfold-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
    store_.emplace(open_store(path_, Store::Mode::read_write));
    store_->create_session(SessionInfo{"s"});
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  Store& st() { return *store_; }

  /// Appends a node extending `pred` (default: the last appended; "" for a root) and moves HEAD to it.
  Node add(const std::string& id, const std::string& role, Json content, std::optional<std::string> pred = {},
           bool move = true) {
    Node n;
    n.id = id;
    n.session = "s";
    n.predecessor = pred ? pred : (last_.empty() ? std::nullopt : std::optional<std::string>(last_));
    if (pred && pred->empty()) n.predecessor.reset();
    n.role = role;
    n.content = std::move(content);
    Txn t(st().db());
    EXPECT_EQ(st().append(n), AppendResult::added) << id;
    if (move) st().move_head("s", id, "append");
    t.commit();
    last_ = id;
    return n;
  }
  Node user(const std::string& id, const std::string& text, std::optional<std::string> pred = {}) {
    return add(id, role::kUser, Json::array({Json{{"type", "text"}, {"text", text}}}), pred);
  }
  Node assistant(const std::string& id, const std::string& text, std::vector<std::string> calls = {},
                 std::optional<std::string> pred = {}) {
    Json c = Json::array({Json{{"type", "text"}, {"text", text}}});
    for (const auto& call : calls)
      c.push_back(Json{{"type", "tool_use"}, {"id", call}, {"name", "Bash"}, {"input", {{"command", "ls " + call}}}});
    return add(id, role::kAssistant, c, pred);
  }
  Node tool(const std::string& id, std::vector<std::string> answers, const std::string& text = "ok") {
    Json c = Json::array();
    for (const auto& a : answers)
      c.push_back(Json{{"type", "tool_result"}, {"tool_use_id", a}, {"content", text}, {"is_error", false}});
    return add(id, role::kTool, c);
  }

  std::filesystem::path dir_;
  std::string path_;
  std::optional<Store> store_;
  std::string last_;
};

}  // namespace ctxfold
