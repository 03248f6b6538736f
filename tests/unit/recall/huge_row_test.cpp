// Issue 4, bad input "huge rows": a 5 MB tool result is searchable (scan and index), expandable
// word for word, and `render` caps it per row with a marker naming the node and its size.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "recall/expand.hpp"
#include "recall/grep.hpp"
#include "recall/text_index.hpp"
#include "render/render.hpp"
#include "store/store.hpp"
#include "session/open.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

class HugeRowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ctxfold-huge-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
    // ~5 MB of log lines with a marker near the end, some CJK on the way.
    for (int i = 0; big_.size() < 5u * 1024 * 1024; ++i)
      big_ += "line " + std::to_string(i) + ": build step ok, 飞书 notified, nothing to report\n";
    big_ += "the needle: FATAL disk quota exceeded\n";
    Store st = open_store(path_, Store::Mode::read_write);
    st.create_session(SessionInfo{"s"});
    auto add = [&](Node n) {
      ASSERT_EQ(st.append(n), AppendResult::added);
      st.move_head("s", n.id, "append");
    };
    Node u;
    u.id = "u1", u.session = "s", u.role = "user";
    u.content = Json::array({Json{{"type", "text"}, {"text", "run the build"}}});
    add(u);
    Node call;
    call.id = "a1", call.session = "s", call.role = "assistant", call.predecessor = "u1";
    call.content = Json::array({Json{{"type", "tool_use"}, {"id", "tu1"}, {"name", "Bash"}, {"input", Json{{"command", "make"}}}}});
    add(call);
    Node res;
    res.id = "r1", res.session = "s", res.role = "user", res.predecessor = "a1";
    res.content = Json::array({Json{{"type", "tool_result"}, {"tool_use_id", "tu1"}, {"content", big_}}});
    add(res);
    Node done;
    done.id = "a2", done.session = "s", done.role = "assistant", done.predecessor = "r1";
    done.content = Json::array({Json{{"type", "text"}, {"text", "the disk quota is exceeded"}}});
    add(done);
    Node sum;
    sum.id = "S", sum.session = "s", sum.role = "user", sum.kind = kind::kSummary;
    sum.content = Json::array({Json{{"type", "text"}, {"text", "ran the build; it failed on the disk quota"}}});
    sum.metadata = Json{{"strategy", "lcm"}};
    sum.covers_ids = {"u1", "a1", "r1"};
    ASSERT_EQ(st.append(sum), AppendResult::added);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string path_;
  std::string big_;
};

TEST_F(HugeRowTest, FiveMegabyteToolResultIsSearchableByScanAndIndex) {
  for (bool indexed : {false, true}) {
    if (indexed) {
      Store w = open_store(path_, Store::Mode::read_write);
      update_text_index(w, false);
    }
    Store st = open_store(path_, Store::Mode::read_only);
    for (bool icase : {false, true}) {
      GrepOptions o;
      o.pattern = icase ? "fatal DISK quota" : "FATAL disk quota";
      o.ignore_case = icase;
      o.session = "s";
      std::vector<GrepMatch> got;
      GrepTotals t = grep(st, o, [&](const GrepMatch& m) { got.push_back(m); });
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].id, "r1");
      EXPECT_EQ(got[0].covered_by.value_or(""), "S");
      EXPECT_NE(got[0].snippet.find("FATAL disk quota"), std::string::npos);
      EXPECT_EQ(t.index, indexed ? (icase ? "trigrams" : "fts5") : "scan");  // -i ASCII: the positional trigrams
    }
  }
}

TEST_F(HugeRowTest, FiveMegabyteToolResultExpandsWordForWord) {
  Store st = open_store(path_, Store::Mode::read_write);
  std::string want = "run the build\n\nBash {\"command\":\"make\"}\n\n" + big_;
  for (bool indexed : {false, true}) {
    if (indexed) update_text_index(st, false);
    std::string got, last;
    int pages = 0;
    for (std::int64_t off = 0;; ++pages) {
      ExpandPage p = expand(st, "S", off, 1 << 20);
      for (const ExpandRow& r : p.rows) {
        if (!last.empty() && r.id != last) got += kExpandSeparator;
        got += r.text;
        last = r.id;
      }
      if (!p.next_offset) break;
      off = *p.next_offset;
    }
    EXPECT_GE(pages, 4);
    EXPECT_TRUE(got == want) << "indexed " << indexed << ": " << got.size() << " vs " << want.size();
  }
}

TEST_F(HugeRowTest, RenderCapsTheRowWithAMarkerNamingItAndItsSize) {
  Store st = open_store(path_, Store::Mode::read_only);
  RenderOptions o;
  o.strategy = "raw";
  Rendered whole = render_context(st, "s", o);
  EXPECT_TRUE(whole.truncated.empty());
  o.max_row_bytes = kDefaultMaxRowBytes;
  Rendered capped = render_context(st, "s", o);
  ASSERT_EQ(capped.truncated.size(), 1u);
  EXPECT_EQ(capped.truncated[0].id, "r1");
  EXPECT_EQ(capped.truncated[0].original_bytes, static_cast<std::int64_t>(big_.size()));
  EXPECT_LE(capped.truncated[0].kept_bytes, kDefaultMaxRowBytes);
  EXPECT_GT(capped.truncated[0].kept_bytes, kDefaultMaxRowBytes - 4);
  Json body = render_request_body(capped, RenderFormat::anthropic);
  const std::string s = dump_json(body);
  EXPECT_LT(s.size(), 2u * static_cast<std::size_t>(kDefaultMaxRowBytes));
  EXPECT_NE(s.find("[ctxfold: row r1 truncated: " + std::to_string(capped.truncated[0].kept_bytes) + " of " +
                   std::to_string(big_.size()) + " bytes shown"),
            std::string::npos);
  EXPECT_EQ(s.find("FATAL disk quota"), std::string::npos);  // past the cap
  EXPECT_NE(s.find("the disk quota is exceeded"), std::string::npos);  // other rows whole
  EXPECT_LT(capped.estimated_tokens * 10, whole.estimated_tokens);
  Json j = render_to_json(capped, RenderFormat::openai);
  ASSERT_TRUE(j.contains("truncated"));
  EXPECT_EQ(j["truncated"][0]["id"], "r1");
  // The stored row is untouched.
  EXPECT_EQ(node_text(*st.node("r1")), big_);
}

}  // namespace
TEST(RowCap, TheMarkerStatesTheBytesKeptWhenTheCutMovesBackToACharacterBoundary) {
  Node n;
  n.id = "wide";
  std::string text;
  for (int i = 0; i < 100; ++i) text += "\xc3\xa9";  // 100 x U+00E9, two bytes each
  n.content = Json::array({Json{{"type", "text"}, {"text", text}}});
  std::vector<TruncatedRow> out;
  cap_row(n, 101, out);  // 101 bytes would split a character: 100 are kept
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].original_bytes, 200);
  EXPECT_EQ(out[0].kept_bytes, 100);
  const std::string capped = n.content[0]["text"].get<std::string>();
  EXPECT_EQ(capped.rfind(text.substr(0, 100), 0), 0u);
  EXPECT_NE(capped.find("truncated: 100 of 200 bytes shown"), std::string::npos) << capped;
}

}  // namespace ctxfold
