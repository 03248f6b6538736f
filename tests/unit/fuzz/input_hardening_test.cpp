// What the fuzzers found (fuzz/README.md), as plain unit tests of the behaviour each fix chose.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "import/import.hpp"
#include "render/render.hpp"
#include "session/append.hpp"
#include "store/store.hpp"
#include "util/id_lines.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class Hardening : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-hardening-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_.emplace(open_store((dir_ / "t.db").string(), Store::Mode::read_write));
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  std::string file(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  ImportResult import(const std::string& path) {
    ImportOptions o;
    return import_paths(*store_, {path}, o);
  }
  AppendOutcome append(const std::string& text) {
    Txn t(store_->db());
    int k = 0;
    AppendOutcome out = append_records(*store_, split_append_records(text), std::string("s"),
                                       [&] { return "gen-" + std::to_string(++k); });
    t.commit();
    return out;
  }
  fs::path dir_;
  std::optional<Store> store_;
};

TEST(IdLines, EmptyIdsAreNotIds) {
  std::istringstream in("a\n\n{\"head\":\"\"}\n{\"id\":\"\",\"node\":\"b\"}\n{\"data\":{\"id\":\"c\"}}\nd  \r\n");
  EXPECT_EQ(ids_from_lines(in), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_F(Hardening, AppendRefusesASummaryOverMissingOrForeignNodes) {
  AppendOutcome first = append(R"({"id":"u1","role":"user","content":"hi"}
{"id":"a1","role":"assistant","content":"yo"}
{"id":"x1","session":"other","role":"user","content":"elsewhere"})");
  ASSERT_TRUE(first.errors.empty());
  AppendOutcome out = append(R"({"id":"v1","kind":"summary","predecessor":null,"role":"user","content":"s","covers_ids":["u1","nope"]}
{"id":"v2","kind":"summary","predecessor":null,"role":"user","content":"s","covers_ids":["x1"]}
{"id":"v3","kind":"summary","predecessor":null,"role":"user","content":"s","covers_ids":[]}
{"id":"v4","kind":"summary","predecessor":null,"role":"user","content":"s","covers_ids":["u1","a1"]})");
  ASSERT_EQ(out.errors.size(), 3u);
  EXPECT_NE(out.errors[0].message.find("'nope', which does not exist"), std::string::npos) << out.errors[0].message;
  EXPECT_NE(out.errors[1].message.find("of another session 'other'"), std::string::npos) << out.errors[1].message;
  EXPECT_NE(out.errors[2].message.find("covers nothing"), std::string::npos) << out.errors[2].message;
  EXPECT_EQ(out.appended, (std::vector<std::string>{"v4"}));
  EXPECT_FALSE(store_->has_node("v1"));
}

TEST_F(Hardening, CtxfoldImportKeepsAnInvalidSummaryVerbatim) {
  ImportResult r = import(file("nodes.jsonl", R"({"schema":"ctxfold.session/1","id":"cs"}
{"id":"u1","role":"user","content":"hi"}
{"id":"s1","kind":"summary","predecessor":null,"role":"user","content":"sum","covers_ids":["u1","ghost"]}
)"));
  EXPECT_FALSE(store_->has_node("s1"));
  EXPECT_TRUE(store_->has_node("u1"));
  bool warned = false;
  for (const auto& w : r.warnings) warned = warned || (w.code == "covers.invalid" && w.line == 3);
  EXPECT_TRUE(warned);
  EXPECT_EQ(store_->source_record_count("cs"), 1);
}

TEST_F(Hardening, AnImportedPredecessorFromAnotherSessionMakesARoot) {
  ImportResult r = import(file("nodes.jsonl", R"({"id":"a1","session":"A","role":"user","content":"a"}
{"id":"b1","session":"B","predecessor":"a1","role":"user","content":"b"}
)"));
  auto b1 = store_->node("b1");
  ASSERT_TRUE(b1);
  EXPECT_FALSE(b1->predecessor.has_value());
  EXPECT_EQ(b1->metadata["missing_predecessor"], "a1");
  bool warned = false;
  for (const auto& w : r.warnings)
    warned = warned || (w.code == "parent.missing" && w.message.find("another session 'A'") != std::string::npos);
  EXPECT_TRUE(warned);
}

TEST_F(Hardening, AnthropicKeepsALaterSystemMessageInPlace) {
  AppendOutcome out = append(R"({"id":"s0","role":"system","content":"be brief"}
{"id":"u1","role":"user","content":"hi"}
{"id":"a1","role":"assistant","content":"yo"}
{"id":"s1","role":"system","content":"new rules"})");
  ASSERT_TRUE(out.errors.empty());
  Rendered at_a1 = [&] {
    RenderOptions o;
    o.head = "a1";
    return render_context(*store_, "s", o);
  }();
  Rendered at_s1 = render_context(*store_, "s", RenderOptions{});
  Json before = render_request_body(at_a1, RenderFormat::anthropic);
  Json after = render_request_body(at_s1, RenderFormat::anthropic);
  EXPECT_EQ(after["system"], "be brief");
  EXPECT_EQ(before["system"], after["system"]);  // appending s1 leaves the prefix alone (I10)
  ASSERT_EQ(after["messages"].size(), 3u);
  EXPECT_EQ(after["messages"][2]["role"], "user");
  EXPECT_EQ(after["messages"][2]["content"][0]["text"], std::string(kMidSystemPrefix) + "new rules");
  for (std::size_t i = 0; i < before["messages"].size(); ++i) EXPECT_EQ(before["messages"][i], after["messages"][i]);
}

}  // namespace
}  // namespace ctxfold
