// snapcompact: font, layout, frames, PNG pixels, budget, geometry, and the strategy end to end on
// a small session (docs/strategies.md "snapcompact").
#include <gtest/gtest.h>
#include <png.h>

#include "invariants/verify.hpp"
#include "recall/grep.hpp"
#include "render/render.hpp"
#include "session_fixture.hpp"
#include "snapcompact/archive.hpp"
#include "snapcompact/frames.hpp"
#include "session/fork.hpp"
#include "strategies/notes.hpp"
#include "strategies/snapcompact.hpp"
#include "fake_environment.hpp"

namespace ctxfold {
namespace {

/// Decodes PNG bytes to 8-bit gray with libpng's simplified API (independent of the encoder path).
struct Gray {
  int width = 0, height = 0;
  std::vector<std::uint8_t> px;
};
Gray decode(const std::string& png) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_memory(&img, png.data(), png.size()));
  img.format = PNG_FORMAT_GRAY;
  Gray g;
  g.width = static_cast<int>(img.width);
  g.height = static_cast<int>(img.height);
  g.px.resize(PNG_IMAGE_SIZE(img));
  EXPECT_TRUE(png_image_finish_read(&img, nullptr, g.px.data(), 0, nullptr));
  return g;
}

/// The expected picture of `lines` (already one row each, no wrapping, no tabs), drawn cell by
/// cell straight from the font's glyphs: 0 = ink, 255 = paper. Code points the font lacks use U+FFFD.
std::vector<std::uint8_t> expected_pixels(const std::vector<std::u32string>& lines, int columns, int rows) {
  const Font& f = font_8x13();
  const int w = columns * kGlyphAdvance, h = rows * kGlyphPitch;
  std::vector<std::uint8_t> px(static_cast<std::size_t>(w) * h, 255);
  for (int r = 0; r < static_cast<int>(lines.size()); ++r)
    for (int c = 0; c < static_cast<int>(lines[r].size()); ++c) {
      const Glyph* g = f.find(lines[r][c]);
      if (!g) g = &f.replacement();
      for (int y = 0; y < kGlyphPitch; ++y)
        for (int x = 0; x < kGlyphAdvance; ++x)
          if (((*g)[y] >> (7 - x)) & 1) px[static_cast<std::size_t>(r * kGlyphPitch + y) * w + c * kGlyphAdvance + x] = 0;
    }
  return px;
}

TEST(SnapFont, TheEmbeddedMiscFixedFontIsComplete) {
  const Font& f = font_8x13();
  EXPECT_GT(f.size(), 3000u);  // the ISO10646 8x13 has about 3,700 glyphs
  ASSERT_NE(f.find('A'), nullptr);
  ASSERT_NE(f.find(0x00E9), nullptr);  // é
  EXPECT_EQ(f.find(0x4E2D), nullptr);  // 中: not in 8x13
  const Glyph& a = *f.find('A');
  int ink = 0;
  for (auto row : a) ink += __builtin_popcount(row);
  EXPECT_GT(ink, 10);
  EXPECT_NE(*f.find('A'), *f.find('B'));
}

TEST(SnapLayout, LongLinesWrapAtCharacterBoundariesAndTabsExpand) {
  // Five-column rows over two-byte characters: every row break falls between characters.
  std::string text = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";  // 7 x é
  auto rows = layout_rows(text, 5);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].end - rows[0].begin, 10u);
  EXPECT_EQ(rows[1].begin, 10u);
  // A base and its combining mark take one cell; a tab goes to the next stop.
  rows = layout_rows("e\xCC\x81" "abcd\n\tx\n", 5);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].end, 7u);  // "é" (3 bytes) + abcd = 5 cells
  EXPECT_EQ(rows[1].begin, rows[0].end + 1);  // after the '\n'
  rows = layout_rows("ab\tc", 8);  // tab from column 2 to 8: the row is full, c wraps
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(layout_rows("", 5).size(), 0u);
  EXPECT_EQ(layout_rows("a\n", 5).size(), 1u);
  EXPECT_EQ(layout_rows("a\n\nb", 5).size(), 3u);
  // Right-to-left text keeps its logical order, one cell a letter (Hebrew alef, bet, gimel).
  rows = layout_rows("\xD7\x90\xD7\x91\xD7\x92", 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].end, 4u);
  ASSERT_NE(font_8x13().find(0x05D0), nullptr);
  // An ill-formed byte is a cell of its own and never swallows its neighbours.
  rows = layout_rows(std::string("a\xFF" "b"), 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].end, 2u);
}

TEST(SnapFrames, PngDecodesToTheGlyphsPixelForPixel) {
  FrameGeometry g;
  g.columns = 12;
  g.rows = 3;
  // Line 1 wraps after 12 cells; a missing character (中) and a control character are drawn as
  // the replacement glyph and counted; an accented letter comes from the font.
  std::string text = "Hello, world! more\nx\xE4\xB8\xAD" "\x01y \xC3\xA9";
  auto rows = layout_rows(text, g.columns);
  auto frames = split_frames(text, rows, g);
  ASSERT_EQ(frames.size(), 1u);
  std::int64_t missing = 0;
  Bitmap b = draw_frame(text, rows, frames[0], g, &missing);
  EXPECT_EQ(missing, 2);
  Gray img = decode(encode_png(b));
  ASSERT_EQ(img.width, 96);
  ASSERT_EQ(img.height, 39);
  auto want = expected_pixels({U"Hello, world", U"! more", U"x\uFFFD\uFFFDy \u00E9"}, 12, 3);
  ASSERT_EQ(img.px.size(), want.size());
  std::size_t diff = 0;
  for (std::size_t i = 0; i < want.size(); ++i) diff += img.px[i] != want[i];
  EXPECT_EQ(diff, 0u);
  // The bitmap and the decoded PNG agree on every pixel too (1 bit a pixel, ink = black).
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) ASSERT_EQ(b.ink(x, y), img.px[static_cast<std::size_t>(y) * img.width + x] == 0);
  auto round = base64_decode(base64_encode(encode_png(b)));
  ASSERT_TRUE(round);
  EXPECT_EQ(*round, encode_png(b));
}

TEST(SnapFrames, Base64IsRfc4648WithPaddingAndRefusesWhatItDoesNotWrite) {
  // RFC 4648 section 10's test vectors.
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},     {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},   {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    EXPECT_EQ(base64_encode(plain), coded);
    auto back = base64_decode(coded);
    ASSERT_TRUE(back) << coded;
    EXPECT_EQ(*back, plain);
  }
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(base64_decode(base64_encode(all)).value_or(""), all);
  for (const char* bad : {"Zg=", "Zm9vY", "Zm9v\nYmFy", "Zm 9", "Z===", "Zm9vYg==Zm9v", "Zm$v", "Zm-_"})
    EXPECT_FALSE(base64_decode(bad)) << bad;
}

TEST(SnapFrames, AppendingKeepsTheLeadingFramesKeys) {
  FrameGeometry g;
  g.columns = 20;
  g.rows = 4;
  std::string text;
  for (int i = 0; i < 30; ++i) text += "line " + std::to_string(i) + "\n";
  auto f1 = split_frames(text, layout_rows(text, g.columns), g);
  std::string more = text + "\nappended later\nand more";
  auto f2 = split_frames(more, layout_rows(more, g.columns), g);
  ASSERT_GE(f1.size(), 7u);
  ASSERT_GT(f2.size(), f1.size());
  for (std::size_t i = 0; i + 1 < f1.size(); ++i) EXPECT_EQ(f1[i].key, f2[i].key) << i;
  std::int64_t chars = 0;
  for (const auto& f : f1) chars += f.chars;
  EXPECT_EQ(chars, static_cast<std::int64_t>(text.size()));  // ASCII: one character a byte, line breaks included
  FrameGeometry other = g;
  other.columns = 21;
  auto f3 = split_frames(text, layout_rows(text, other.columns), other);
  EXPECT_NE(f3[0].key, f1[0].key);  // the geometry is part of the key
}

TEST(SnapBudget, TheSmallestOfTheFourLimits) {
  ModelInfo unknown = lookup_model("no-such-model");
  EXPECT_FALSE(unknown.known);
  EXPECT_TRUE(unknown.reads_images);
  FrameGeometry g = frame_geometry(unknown);
  EXPECT_EQ(frame_budget(unknown, g, {}).limit, 5);
  ModelInfo claude_api = lookup_model("claude-sonnet-4-5");
  FrameBudget b = frame_budget(claude_api, frame_geometry(claude_api), {});  // 90 declared, 60 inline, window 200k*20%
  EXPECT_EQ(b.provider, 90);
  EXPECT_EQ(b.limit, 26);  // 40,000 tokens / ~1,524 a full frame
  EXPECT_EQ(b.binding, "window");
  SnapSettings big{std::int64_t(10000000), 20, std::nullopt};
  EXPECT_EQ(frame_budget(claude_api, frame_geometry(claude_api), big).limit, 60);
  ModelInfo claude = lookup_model("claude");
  EXPECT_EQ(frame_budget(claude, frame_geometry(claude), big).limit, 80);  // files API: no inline cap
  SnapSettings capped{std::int64_t(10000000), 20, 7};
  EXPECT_EQ(frame_budget(claude, frame_geometry(claude), capped).limit, 7);
  ModelInfo no_limits = lookup_model("local-vision-unlisted-limits");
  EXPECT_TRUE(no_limits.known);
  EXPECT_FALSE(no_limits.image_limits_declared);
  EXPECT_EQ(frame_budget(no_limits, frame_geometry(no_limits), big).limit, 10);  // umans
  EXPECT_EQ(kept_frames(10, 4), (std::vector<std::size_t>{0, 7, 8, 9}));
  EXPECT_EQ(kept_frames(3, 4), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(kept_frames(3, 1), (std::vector<std::size_t>{2}));
}

// Transcripts record Anthropic's dated snapshot ids; the catalog lists the aliases.
TEST(SnapBudget, ADatedSnapshotIdTakesItsAliasEntry) {
  ModelInfo dated = lookup_model("claude-haiku-4-5-20251001");
  EXPECT_TRUE(dated.known);
  EXPECT_EQ(dated.id, "claude-haiku-4-5-20251001");
  EXPECT_EQ(dated.provider, "anthropic");
  EXPECT_EQ(dated.max_images, lookup_model("claude-haiku-4-5").max_images);
  EXPECT_FALSE(lookup_model("claude-haiku-4-5-2025100").known);  // not a date
  EXPECT_FALSE(lookup_model("claude-haiku-4-5x20251001").known);
  EXPECT_FALSE(lookup_model("20251001").known);
}

TEST(SnapGeometry, ClampedToTheModelsImageEdgeNeverScaled) {
  FrameGeometry def = frame_geometry(lookup_model(""));
  EXPECT_EQ(def.columns, 134);
  EXPECT_EQ(def.rows, 82);
  EXPECT_LE(static_cast<std::int64_t>(def.width()) * def.full_height(), 1150000);
  FrameGeometry oai = frame_geometry(lookup_model("gpt-4o"));
  EXPECT_LE(std::min(oai.width(), oai.full_height()), 768);
  EXPECT_EQ(oai.columns, 96);
  FrameGeometry gem = frame_geometry(lookup_model("gemini-2.5-pro"));
  EXPECT_LE(gem.width(), 768);
  EXPECT_LE(gem.full_height(), 768);
  EXPECT_FALSE(lookup_model("deepseek-chat").reads_images);
}

class SnapTest : public SessionTest {
 protected:
  void turns(int n, int from = 1) {
    for (int i = from; i < from + n; ++i) {
      std::string k = std::to_string(i);
      user("u" + k, "request " + k + " " + words(400, 'a'));
      Node a = assistant("a" + k, "working on " + k, {"T" + k});
      tool("r" + k, {"T" + k}, "result " + k + " " + words(1200, 'b'));
      add("b" + k, role::kAssistant,
          Json::array({Json{{"type", "thinking"}, {"thinking", "SECRET-REASONING-" + k}, {"signature", "s"}},
                       Json{{"type", "text"}, {"text", "done " + k + " " + words(400, 'c')}}}));
    }
  }
  SnapcompactOptions opts(std::int64_t window = 4000) {
    SnapcompactOptions o;
    o.env = &testing_env::shared_environment();
    o.window = window;
    return o;
  }
  void expect_verifies() {
    VerifyReport r = verify_invariants(st(), {"s"});
    for (const auto& c : r.checks)
      for (const auto& v : c.violations) ADD_FAILURE() << c.id << ": " << v.message;
    EXPECT_TRUE(r.ok);
  }
};

TEST_F(SnapTest, ArchiveFramesTailAndRecompactionAppends) {
  turns(6);
  FakeSummarizer f;
  f.fn = [](const SummaryRequest&, int) { return std::string("unused"); };
  CompactResult r = compact_snapcompact(st(), "s", f, opts());
  ASSERT_EQ(r.status, "compacted") << r.reason;
  EXPECT_TRUE(f.requests.empty());  // nothing is paraphrased: no summarizer call
  auto arc = st().node(*r.summary_id);
  ASSERT_TRUE(arc);
  EXPECT_EQ(arc->kind, kind::kArchive);
  const std::string text = archive_text(*arc);
  EXPECT_NE(text.find("[tool call Bash id=T1]"), std::string::npos);
  EXPECT_NE(text.find("result 1 bbbb"), std::string::npos);
  EXPECT_EQ(text.find("SECRET-REASONING"), std::string::npos);  // reasoning left out
  EXPECT_GT(r.details["frames_cached"].get<int>(), 0);

  RenderOptions ro;
  ro.strategy = "snapcompact";
  Rendered rr = render_context(st(), "s", ro);
  ASSERT_TRUE(rr.archive);
  EXPECT_EQ(*rr.archive, arc->id);
  Json body = render_request_body(rr, RenderFormat::anthropic);
  const Json& first = body["messages"][0]["content"];
  ASSERT_GE(first.size(), 2u);
  EXPECT_EQ(first[0]["type"], "text");
  EXPECT_EQ(first[1]["type"], "image");
  EXPECT_EQ(first[1]["source"]["media_type"], "image/png");
  for (const auto& fr : rr.frames["frames"]) EXPECT_TRUE(fr["cached"].get<bool>());
  // The tail after the frames is verbatim: the last user message is there as written.
  EXPECT_NE(dump_json(body).find("request 6 aaaa"), std::string::npos);
  Json oai = render_request_body(rr, RenderFormat::openai);
  EXPECT_NE(dump_json(oai["messages"][0]).find("data:image/png;base64,"), std::string::npos);

  // Another strategy reads the archive as a text fold; grep reaches its text.
  RenderOptions rolling;
  Rendered rt = render_context(st(), "s", rolling);
  ASSERT_EQ(rt.folds.size(), 1u);
  EXPECT_EQ(rt.folds[0].kind, "archive");
  expect_verifies();

  // Recompaction appends: the new archive's text starts with the old one's.
  turns(4, 7);
  CompactResult r2 = compact_snapcompact(st(), "s", f, opts());
  ASSERT_EQ(r2.status, "compacted") << r2.reason;
  auto arc2 = st().node(*r2.summary_id);
  const std::string text2 = archive_text(*arc2);
  EXPECT_EQ(text2.substr(0, text.size()), text);
  EXPECT_GT(text2.size(), text.size());
  EXPECT_EQ(std::vector<std::string>(arc2->covers_ids.begin(), arc2->covers_ids.begin() + arc->covers_ids.size()),
            arc->covers_ids);
  Rendered rr2 = render_context(st(), "s", ro);
  EXPECT_EQ(*rr2.archive, arc2->id);
  expect_verifies();
}

TEST_F(SnapTest, ATextOnlyModelGetsRollingAndTheArchiveStays) {
  turns(6);
  FakeSummarizer f;
  f.fn = [](const SummaryRequest& r, int) { return "summary: " + r.transcript.substr(0, 200); };
  CompactResult r = compact_snapcompact(st(), "s", f, opts());
  ASSERT_EQ(r.status, "compacted");
  turns(3, 7);
  SnapcompactOptions o = opts();
  o.model = "deepseek-chat";
  CompactResult t = compact_snapcompact(st(), "s", f, o);
  EXPECT_EQ(t.details["fallback"], "rolling");
  ASSERT_EQ(t.status, "compacted") << t.reason << " " << dump_json(compact_to_json(t));
  RenderOptions ro;
  ro.strategy = "snapcompact";
  ro.model = "deepseek-chat";
  Rendered rr = render_context(st(), "s", ro);
  EXPECT_EQ(rr.fallback, std::optional<std::string>("rolling"));
  EXPECT_TRUE(rr.summary);
  EXPECT_FALSE(rr.archive);
  EXPECT_EQ(dump_json(render_request_body(rr, RenderFormat::anthropic)).find("\"image\""), std::string::npos);
  EXPECT_TRUE(st().active_view("s", kind::kArchive, StrategyLabel::snapcompact));
  expect_verifies();
}

TEST_F(SnapTest, OverBudgetDropsMiddleFramesAndTheCaptionSaysHowMuch) {
  turns(8);
  FakeSummarizer f;
  SnapcompactOptions o = opts();
  o.max_frames = 2;
  CompactResult r = compact_snapcompact(st(), "s", f, o);
  ASSERT_EQ(r.status, "compacted") << r.reason;
  RenderOptions ro;
  ro.strategy = "snapcompact";
  ro.model = "gemini-2.5-pro";  // narrow frames: many of them
  ro.max_frames = 2;
  Rendered rr = render_context(st(), "s", ro);
  ASSERT_GT(rr.frames["total"].get<int>(), 2);
  EXPECT_EQ(rr.frames["kept"].get<int>(), 2);
  EXPECT_GT(rr.frames["dropped_chars"].get<int>(), 0);
  const std::string caption = rr.items[0].content[0]["text"];
  EXPECT_NE(caption.find(std::to_string(rr.frames["dropped_chars"].get<int>()) + " characters in"), std::string::npos)
      << caption;
  EXPECT_EQ(rr.frames["frames"][0]["index"], 0);
  EXPECT_EQ(rr.frames["frames"][1]["index"].get<int>(), rr.frames["total"].get<int>() - 1);
}

}  // namespace
}  // namespace ctxfold

namespace ctxfold {
namespace {

TEST_F(SnapTest, NotesAreRewrittenRenderedFirstSurviveASwitchAndAFailureKeepsThem) {
  add("sys", role::kSystem, Json::array({Json{{"type", "text"}, {"text", "system prompt"}}}), std::string());
  turns(6);
  FakeSummarizer f;
  f.fn = [](const SummaryRequest& r, int call) {
    EXPECT_EQ(r.prompt_version, "notes-v1");
    EXPECT_NE(r.instructions.find("2000 tokens"), std::string::npos);
    EXPECT_EQ(r.max_output_tokens, 2500);  // a quarter above the budget
    return "NOTES " + std::to_string(call) + " prev=[" + r.previous_summary.substr(0, 20) + "] " + r.transcript.substr(0, 40);
  };
  CompactResult r = compact_snapcompact(st(), "s", f, opts());
  ASSERT_EQ(r.status, "compacted");
  Json n1 = rewrite_notes(st(), "s", r, f, NotesOptions{});
  ASSERT_EQ(n1["status"], "rewritten") << n1.dump();
  EXPECT_FALSE(f.requests.front().transcript.empty());
  EXPECT_TRUE(f.requests.front().previous_summary.empty());
  for (const std::string strategy : {"snapcompact", "rolling", "lcm"}) {
    RenderOptions ro;
    ro.strategy = strategy;
    Rendered rr = render_context(st(), "s", ro);
    ASSERT_TRUE(rr.notes) << strategy;
    ASSERT_GE(rr.sections.size(), 2u);
    EXPECT_EQ(rr.sections[0].kind, "system");
    EXPECT_EQ(rr.sections[1].kind, "notes") << strategy;
    EXPECT_EQ(json_str(rr.items[1].content[0], "text"), kNotesHeader);
  }
  expect_verifies();
  // A strategy switch: rolling compacts, the notes are rewritten from their cursor on and carried.
  turns(4, 7);
  FakeSummarizer rs;
  rs.fn = [](const SummaryRequest& r, int) { return "rolled " + r.transcript.substr(0, 100); };
  RollingOptions ro;
  ro.env = &testing_env::shared_environment();
  ro.window = 4000;
  ro.tail_percent = 10;
  CompactResult r2 = compact_rolling(st(), "s", rs, ro);
  ASSERT_EQ(r2.status, "compacted") << r2.reason;
  const std::size_t before = f.requests.size();
  Json n2 = rewrite_notes(st(), "s", r2, f, NotesOptions{});
  ASSERT_EQ(n2["status"], "rewritten") << n2.dump();
  EXPECT_EQ(n2["previous"], n1["id"]);
  EXPECT_EQ(f.requests[before].previous_summary.rfind("NOTES 1", 0), 0u);
  EXPECT_EQ(f.requests[before].transcript.find("request 1 "), std::string::npos);  // only what is new
  // A failed rewrite keeps the old notes and says so.
  turns(4, 11);
  CompactResult r3 = compact_rolling(st(), "s", rs, ro);
  ASSERT_EQ(r3.status, "compacted") << r3.reason;
  FakeSummarizer bad;
  bad.fn = [](const SummaryRequest&, int) -> std::string { throw Error(Exit::environment, "summarizer.http", "down"); };
  Json n3 = rewrite_notes(st(), "s", r3, bad, NotesOptions{});
  EXPECT_EQ(n3["status"], "failed");
  EXPECT_EQ(session_notes(st(), "s")->id, n2["id"]);
  Rendered after = render_context(st(), "s", RenderOptions{});
  EXPECT_EQ(after.notes, std::optional<std::string>(n2["id"].get<std::string>()));
  expect_verifies();
  // A fork starts without notes.
  ForkOptions fo;
  fo.at = *st().head("s");
  fo.name = "f1";
  fork_session(st(), fo);
  EXPECT_FALSE(session_notes(st(), "f1"));
  EXPECT_FALSE(render_context(st(), "f1", RenderOptions{}).notes);
}

}  // namespace
}  // namespace ctxfold
