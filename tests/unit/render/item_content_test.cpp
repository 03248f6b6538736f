// render_moved (render/moved.hpp; docs/render.md "Memory", docs/invariants.md "Memory"): the
// render verify-invariants makes moves each item's content into the messages instead of copying
// it. On every real transcript (read in place), rolling, raw and lcm renders at HEAD and at nodes
// along the spine, and after rolling and lcm compactions, everything but the items' content is the
// same as the whole render's: messages, repairs, reads, sections, estimates, token figure,
// warnings, and the openai and anthropic documents and request bodies byte for byte (and their
// streamed digests, util/json.hpp dump_json_sha256).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "forced_options.hpp"
#include "import/import.hpp"
#include "render/moved.hpp"
#include "render/render.hpp"
#include "session/open.hpp"
#include "strategies/lcm.hpp"
#include "strategies/rolling.hpp"
#include "summarize/extractive.hpp"
#include "util/digest.hpp"
#include "util/json_digest.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

const std::string kDir = CTXFOLD_TRANSCRIPTS_DIR;

/// Every shipped transcript file a session is imported from (sidechains come with their main file).
std::vector<std::string> transcript_files() {
  std::vector<std::string> out;
  if (!fs::exists(kDir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(kDir)) {
    if (!e.is_regular_file()) continue;
    const std::string p = e.path().string();
    if (p.find("/subagents/") != std::string::npos) continue;
    const std::string ext = e.path().extension().string();
    if (ext == ".jsonl" || ext == ".json") out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Json messages_json(const Rendered& r) {
  Json out = Json::array();
  for (const auto& m : r.messages)
    out.push_back(Json{{"role", m.role}, {"kind", m.kind}, {"ids", m.ids}, {"content", m.content}, {"part", m.part}});
  return out;
}

Json repairs_json(const Rendered& r) {
  Json out = Json::array();
  for (const auto& rp : r.repairs) out.push_back(Json{{"kind", rp.kind}, {"node", rp.node}, {"id", rp.tool_use_id}});
  return out;
}

/// Compares the render without item content with the whole one at the same options; returns the
/// number of differing fields (each reported).
int compare_render(Store& st, const std::string& session, RenderOptions o, const std::string& what) {
  o.lean_metadata = true;
  const Rendered whole = render_context(st, session, o);
  const Rendered moved = render_moved(st, session, o);
  int bad = 0;
  auto check = [&](bool same, const std::string& field) {
    if (!same) {
      ++bad;
      ADD_FAILURE() << what << ": " << field;
    }
  };
  check(dump_json(messages_json(moved)) == dump_json(messages_json(whole)), "messages");
  check(dump_json(repairs_json(moved)) == dump_json(repairs_json(whole)), "repairs");
  check(moved.reads == whole.reads, "reads");
  check(moved.item_tokens == whole.item_tokens && moved.item_prior_thinking == whole.item_prior_thinking,
        "item estimates");
  check(moved.estimated_tokens == whole.estimated_tokens, "estimated_tokens");
  check(dump_json(moved.tokens.to_json()) == dump_json(whole.tokens.to_json()),
        "token figure " + dump_json(moved.tokens.to_json()) + " vs " + dump_json(whole.tokens.to_json()));
  check(moved.warnings == whole.warnings, "warnings");
  check(moved.items.size() == whole.items.size(), "item count");
  for (std::size_t i = 0; i < std::min(moved.items.size(), whole.items.size()); ++i) {
    const Node& a = moved.items[i];
    const Node& b = whole.items[i];
    check(a.id == b.id && a.kind == b.kind && a.role == b.role && a.seq == b.seq, "item " + b.id);
    check(dump_json(a.metadata) == dump_json(b.metadata), "metadata of " + b.id);
    check(a.content == Json::array(), "content of " + b.id + " left behind");
  }
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const std::string name = f == RenderFormat::openai ? "openai" : "anthropic";
    const std::string doc = dump_json(render_to_json(whole, f));
    const Json moved_doc = render_to_json(moved, f);
    check(dump_json(moved_doc) == doc, name + " document");
    check(dump_json_sha256(moved_doc) == sha256_hex(doc), name + " document digest");
    const Json body = render_request_body(moved, f);
    check(dump_json(body) == dump_json(render_request_body(whole, f)), name + " body");
    for (const auto& m : body["messages"])
      if (dump_json_sha256(m) != sha256_hex(dump_json(m))) {
        check(false, name + " message digest");
        break;
      }
  }
  return bad;
}

/// Every session of st: rolling, raw and lcm renders at HEAD, and rolling renders at every
/// `step`-th node of the raw spine; returns the number of comparisons made.
int compare_all(Store& st, const std::string& what, std::size_t step) {
  int made = 0;
  for (const auto& s : st.sessions()) {
    if (!st.head(s.id)) continue;
    for (const char* strategy : {"rolling", "raw", "lcm"}) {
      RenderOptions o;
      o.strategy = strategy;
      EXPECT_EQ(compare_render(st, s.id, o, what + " " + s.id + " " + strategy), 0);
      ++made;
    }
    RenderOptions raw;
    raw.strategy = "raw";
    const Rendered spine = render_context(st, s.id, raw);
    for (std::size_t i = 0; i < spine.items.size(); i += step) {
      if (spine.items[i].seq <= 0) continue;
      RenderOptions o;
      o.head = spine.items[i].id;
      EXPECT_EQ(compare_render(st, s.id, o, what + " " + s.id + " at " + *o.head), 0);
      ++made;
    }
  }
  return made;
}

class ItemContent : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-item-content-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ItemContent, MovedContentRendersTheSameOnEveryRealTranscript) {
  const std::vector<std::string> files = transcript_files();
  if (files.empty()) GTEST_SKIP() << "no transcripts at " << kDir;
  int made = 0, n = 0;
  for (const auto& file : files) {
    const std::string db = (dir_ / ("t" + std::to_string(n++) + ".db")).string();
    Store st = open_store(db, Store::Mode::read_write);
    try {
      import_paths(st, {file}, ImportOptions{});
    } catch (const std::exception&) {
      continue;  // a file that holds no session
    }
    made += compare_all(st, fs::path(file).filename().string(), 17);
  }
  EXPECT_GT(made, 40);
}

TEST_F(ItemContent, MovedContentRendersTheSameAfterRollingAndLcmCompactions) {
  const std::string file =
      kDir + "/claude-code/compaction_manual_v2.1.39_TRUNCATED/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
  if (!fs::exists(file)) GTEST_SKIP() << "no transcript at " << file;
  for (const char* strategy : {"rolling", "lcm"}) {
    Store st = open_store((dir_ / (std::string(strategy) + ".db")).string(), Store::Mode::read_write);
    import_paths(st, {file}, ImportOptions{});
    const std::string s = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
    ExtractiveSummarizer ex;
    CompactResult c;
    if (std::string(strategy) == "rolling") c = compact_rolling(st, s, ex, testing_env::forced_rolling(60000));
    else c = compact_lcm(st, s, ex, testing_env::forced_small_lcm());
    ASSERT_EQ(c.status, "compacted") << strategy;
    EXPECT_GT(compare_all(st, std::string("compacted ") + strategy, 29), 3);
  }
}

TEST(DumpJsonSha256, IsTheDigestOfTheDumpedText) {
  Json j = Json::parse(R"({"b":[1,2.5,"x\u0001y",null,true],"a":{"k":"\u00e9"}})");
  j["big"] = std::string(200000, 'q');  // longer than the adapter's buffer
  j["bad"] = std::string("\xff\xfe ok");  // invalid UTF-8: replaced, as dump_json does
  EXPECT_EQ(dump_json_sha256(j), sha256_hex(dump_json(j)));
  EXPECT_EQ(dump_json_sha256(Json::array()), sha256_hex("[]"));
}

}  // namespace
}  // namespace ctxfold
