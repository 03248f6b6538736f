#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tokens/estimate.hpp"

namespace ctxfold {
namespace {

std::string be32(std::uint32_t v) {
  return {char(v >> 24), char((v >> 16) & 0xff), char((v >> 8) & 0xff), char(v & 0xff)};
}
std::string le16(unsigned v) { return {char(v & 0xff), char((v >> 8) & 0xff)}; }

/// A real PNG start: signature, IHDR chunk (13 bytes: w, h, depth 8, colour 6, 0, 0, 0) + CRC.
std::string png_header(std::uint32_t w, std::uint32_t h) {
  std::string s = "\x89PNG\r\n\x1a\n";
  s += be32(13) + "IHDR" + be32(w) + be32(h);
  s += std::string("\x08\x06\x00\x00\x00", 5);
  s += be32(0x12345678);  // CRC (not checked)
  return s;
}

std::string base64(const std::string& in) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += a[v >> 18];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += a[v & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += a[v >> 18];
    out += a[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += a[v >> 18];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string random_bytes(std::size_t n) {
  std::mt19937 rng(42);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

/// JPEG: SOI, APP0 JFIF, an APPn segment of `app_len` bytes, DQT, then SOFn with h, w.
std::string jpeg_header(unsigned w, unsigned h, unsigned sof_marker = 0xc0, unsigned app_len = 16) {
  std::string s = "\xff\xd8";
  s += std::string("\xff\xe0", 2) + char(0) + char(16) + std::string("JFIF\0\x01\x01\0\0\x01\0\x01\0\0", 14);
  s += std::string("\xff\xe1", 2) + char(app_len >> 8) + char(app_len & 0xff) + std::string(app_len - 2, 'x');
  s += std::string("\xff\xdb", 2) + char(0) + char(67) + std::string(65, '\x01');
  s += std::string("\xff", 1) + char(sof_marker) + char(0) + char(17) + char(8) + char(h >> 8) + char(h & 0xff) +
       char(w >> 8) + char(w & 0xff) + std::string(12, '\x01');
  s += "\xff\xda";
  return s;
}

TEST(Tokens, PngDimensionsFromRawBytes) {
  auto d = image_dimensions(png_header(800, 600));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->width, 800);
  EXPECT_EQ(d->height, 600);
}

TEST(Tokens, PngDimensionsFromBase64WithNewlinesAndDataUrl) {
  std::string b64 = base64(png_header(1024, 768) + random_bytes(300));
  std::string wrapped;
  for (std::size_t i = 0; i < b64.size(); i += 76) wrapped += b64.substr(i, 76) + "\r\n";
  auto d = image_dimensions_base64(wrapped);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->width, 1024);
  EXPECT_EQ(d->height, 768);
  auto u = image_dimensions_base64("data:image/png;base64," + b64);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->width, 1024);
  EXPECT_EQ(u->height, 768);
}

TEST(Tokens, Base64DecodesOnlyTheHeaderPrefix) {
  // Garbage after the header never gets decoded, so it cannot matter.
  std::string b64 = base64(png_header(32, 16)) + "!!!! not base64 at all";
  auto d = image_dimensions_base64(b64);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->width, 32);
  EXPECT_EQ(d->height, 16);
}

TEST(Tokens, GifDimensions) {
  std::string gif = std::string("GIF89a") + le16(320) + le16(200) + std::string("\xf7\x00\x00", 3);
  auto d = image_dimensions(gif);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->width, 320);
  EXPECT_EQ(d->height, 200);
}

TEST(Tokens, WebpLossyLosslessAndExtended) {
  // VP8: frame tag, start code 9d 01 2a, 14-bit width/height.
  std::string vp8 = "RIFF" + std::string(4, '\0') + "WEBPVP8 " + std::string(4, '\0') + std::string("\x10\x02\x00", 3) +
                    std::string("\x9d\x01\x2a", 3) + le16(640) + le16(480);
  auto a = image_dimensions(vp8);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->width, 640);
  EXPECT_EQ(a->height, 480);

  // VP8L: 0x2f, then (w-1) in 14 bits and (h-1) in the next 14 bits.
  std::uint32_t bits = (300 - 1) | ((150 - 1) << 14);
  std::string vp8l = "RIFF" + std::string(4, '\0') + "WEBPVP8L" + std::string(4, '\0') + "\x2f" +
                     std::string{char(bits & 0xff), char((bits >> 8) & 0xff), char((bits >> 16) & 0xff),
                                 char((bits >> 24) & 0xff)};
  auto b = image_dimensions(vp8l);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->width, 300);
  EXPECT_EQ(b->height, 150);

  // VP8X: flags + 3 reserved, then 24-bit (w-1), (h-1).
  unsigned w1 = 2000 - 1, h1 = 1000 - 1;
  std::string vp8x = "RIFF" + std::string(4, '\0') + "WEBPVP8X" + std::string(4, '\0') + std::string(4, '\0') +
                     std::string{char(w1 & 0xff), char((w1 >> 8) & 0xff), char(w1 >> 16)} +
                     std::string{char(h1 & 0xff), char((h1 >> 8) & 0xff), char(h1 >> 16)};
  auto c = image_dimensions(vp8x);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->width, 2000);
  EXPECT_EQ(c->height, 1000);
}

TEST(Tokens, JpegScansSegmentsToTheFrameHeader) {
  auto d = image_dimensions(jpeg_header(1920, 1080));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->width, 1920);
  EXPECT_EQ(d->height, 1080);
  // Progressive (SOF2) behind a 60 KB EXIF-sized segment, through base64.
  auto p = image_dimensions_base64(base64(jpeg_header(123, 45, 0xc2, 60000) + random_bytes(1000)));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->width, 123);
  EXPECT_EQ(p->height, 45);
  // DHT (0xc4) is not a frame header: with no SOF before SOS there are no dimensions.
  std::string no_sof = "\xff\xd8" + std::string("\xff\xc4", 2) + char(0) + char(4) + "ab" + "\xff\xda";
  EXPECT_FALSE(image_dimensions(no_sof));
}

TEST(Tokens, CorruptTruncatedAndEmptyDataHaveNoDimensions) {
  EXPECT_FALSE(image_dimensions(""));
  EXPECT_FALSE(image_dimensions_base64(""));
  EXPECT_FALSE(image_dimensions_base64("data:image/png;base64,"));
  EXPECT_FALSE(image_dimensions_base64("%%%%corrupt%%%%"));
  EXPECT_FALSE(image_dimensions(png_header(10, 10).substr(0, 20)));  // cut inside IHDR
  EXPECT_FALSE(image_dimensions(png_header(0, 10)));                 // zero width
  EXPECT_FALSE(image_dimensions(jpeg_header(10, 10).substr(0, 30)));
  EXPECT_FALSE(image_dimensions("just some text, not an image"));
}

TEST(Tokens, Bytes4BaselineIsBytesOverFourRoundedUp) {
  EXPECT_EQ(estimate_text_tokens_bytes4(""), 0);
  EXPECT_EQ(estimate_text_tokens_bytes4("abc"), 1);
  EXPECT_EQ(estimate_text_tokens_bytes4("abcd"), 1);
  EXPECT_EQ(estimate_text_tokens_bytes4("abcde"), 2);
  EXPECT_EQ(estimate_block_tokens(Json{{"type", "text"}, {"text", std::string(400, 'a')}}, Provider::generic,
                                  Estimator::bytes4),
            100 + kBlockOverhead);
}

TEST(Tokens, TextClassesCountWhatDrivesTokens) {
  EXPECT_EQ(estimate_text_tokens(""), 0);
  EXPECT_EQ(estimate_text_tokens("a"), 2);  // one word: ceil(1.25)
  // Words cost per word, not per byte: the same bytes as one long run cost more than as words.
  EXPECT_LT(estimate_text_tokens("the cat sat on the mat"), estimate_text_tokens("thecatsatonthemat!!!!!"));
  // camelCase and long identifiers split.
  EXPECT_GT(estimate_text_tokens("parseConfigFileOrThrow"), estimate_text_tokens("parse config"));
  // Indentation: a run of spaces is a few tokens, not bytes/4 of them.
  EXPECT_LE(estimate_text_tokens(std::string(16, ' ') + "x"), 4);
  EXPECT_GE(estimate_text_tokens(std::string(3200, ' ')), 200 * 1);  // but a huge run is not free
  // CJK: one token per character (no CJK in the measured data; see TextWeights::cjk).
  EXPECT_EQ(estimate_text_tokens("\xE4\xB8\x8A\xE4\xB8\x8B\xE6\x96\x87"), 3);  // 上下文
  EXPECT_EQ(estimate_text_tokens("\xF0\x9F\x98\x80"), 1);                      // one emoji
  // Invalid UTF-8 counts per byte and never throws: a lone continuation byte, a truncated
  // sequence, an overlong encoding and a surrogate.
  EXPECT_EQ(estimate_text_tokens("\x80"), 1);
  EXPECT_EQ(estimate_text_tokens("\xE4\xB8"), 2);
  EXPECT_EQ(estimate_text_tokens("\xC0\xAF"), 2);
  EXPECT_EQ(estimate_text_tokens("\xED\xA0\x80"), 3);
}

// Regression guard against bytes/4 (issue 9). The ranges are the provider-measured densities of
// the real Claude Code sessions in shared/data/transcripts: over the 266 request deltas (see
// TextWeights), deltas where tool output (code, file listings, build logs) is over 80% of the
// added bytes measured 0.27-0.50 tokens per UTF-8 byte after the per-call framing (45 deltas,
// median 0.34); deltas dominated by Write/Edit inputs (code inside tool-call JSON) 0.26-0.68
// (21 deltas); prose-dominated deltas 0.29 (2). bytes/4 is 0.25 for all of them, which is the
// 43% median under-count the issue measured. The samples below are written for this test, in
// the style of those deltas; CJK has no measured data and is held to the o200k-derived range
// 0.6-1.3 tokens per character (TextWeights::cjk).
TEST(Tokens, RepresentativeMixMatchesMeasuredDensityNotBytes4) {
  const std::string code =
      "     1\xE2\x86\x92#include \"render/render.hpp\"\n"
      "     2\xE2\x86\x92\n"
      "     3\xE2\x86\x92namespace ctxfold {\n"
      "     4\xE2\x86\x92std::int64_t items_tokens(const std::vector<Node>& items, std::size_t b) {\n"
      "     5\xE2\x86\x92  std::int64_t t = 0;\n"
      "     6\xE2\x86\x92  for (std::size_t i = b; i < items.size(); ++i) t += estimate_node_tokens(items[i]);\n"
      "     7\xE2\x86\x92  if (t > kMaxTokens) throw Error(Exit::bad_input, \"render.too_large\", msg);\n"
      "     8\xE2\x86\x92  return t;\n"
      "     9\xE2\x86\x92}\n";
  const std::string json =
      R"({"file_path":"/home/user/projects/app/lib/app_web/controllers/hooks_controller.ex",)"
      R"("old_string":"  alias AppWeb.TraceHelpers\n\n  require Ash.Query","new_string":)"
      R"("  alias AppWeb.TraceHelpers\n\n  require Ash.Query\n  require AppWeb.TraceHelpers",)"
      R"("replace_all":false,"ids":[101,202,303],"ok":true})";
  const std::string log =
      "error[E0425]: cannot find value `cfg` in this scope\n  --> src/main.rs:42:17\n   |\n42 |     let x = "
      "cfg.window_tokens * 2;\n   |             ^^^ not found in this scope\n\nwarning: unused variable: `y`\n"
      "Finished dev [unoptimized + debuginfo] target(s) in 3.21s\n";
  const std::string prose =
      "I looked at the renderer and the compaction pipeline. The summary is admitted where its segment "
      "began, and the tail keeps its ids, so nothing has to be rewritten when the session grows again.";
  const std::string cjk = "\xE4\xB8\x8A\xE4\xB8\x8B\xE6\x96\x87\xE7\xAA\x97\xE5\x8F\xA3\xE6\x98\xAF\xE6\x8C\x87"
                          "\xE8\xAF\xAD\xE8\xA8\x80\xE6\xA8\xA1\xE5\x9E\x8B";  // 上下文窗口是指语言模型 (11 chars)
  auto density = [](const std::string& s) {
    return static_cast<double>(estimate_text_tokens(s)) / static_cast<double>(s.size());
  };
  for (const auto* s : {&code, &log}) {
    EXPECT_GE(density(*s), 0.27) << *s;
    EXPECT_LE(density(*s), 0.50) << *s;
  }
  EXPECT_GE(density(json), 0.26);
  EXPECT_LE(density(json), 0.68);
  EXPECT_GE(density(prose), 0.18);
  EXPECT_LE(density(prose), 0.36);
  const double per_char = static_cast<double>(estimate_text_tokens(cjk)) / 11.0;
  EXPECT_GE(per_char, 0.6);
  EXPECT_LE(per_char, 1.3);
  // The mix as a whole: bytes/4 is below the measured floor; the estimate is inside the range.
  const std::string mix = code + json + log + prose + cjk;
  EXPECT_LT(static_cast<double>(estimate_text_tokens_bytes4(mix)) / static_cast<double>(mix.size()), 0.26);
  EXPECT_GE(density(mix), 0.27);
  EXPECT_LE(density(mix), 0.50);
}

TEST(Tokens, ToolFramingPerProvider) {
  Json use{{"type", "tool_use"}, {"id", "toolu_01"}, {"name", "Bash"}, {"input", Json{{"command", "ls -la"}}}};
  EXPECT_EQ(estimate_block_tokens(use, Provider::anthropic),
            kAnthropicFraming.tool_use + estimate_text_tokens("Bash") + kAnthropicFraming.tool_key +
                estimate_text_tokens("command") + estimate_text_tokens("ls -la"));
  Json res{{"type", "tool_result"}, {"tool_use_id", "toolu_01"}, {"content", "total 0"}};
  EXPECT_EQ(estimate_block_tokens(res, Provider::anthropic), kAnthropicFraming.tool_result + estimate_text_tokens("total 0"));
  Node n;
  n.id = "u";
  n.role = "user";
  n.metadata = Json{{"source", {{"format", "codex"}}}};
  EXPECT_EQ(provider_of(n), Provider::openai);
  EXPECT_EQ(estimate_node_tokens(n), kOpenAIFraming.message);
  n.metadata = Json{{"source", {{"format", "claude-code"}}}};
  EXPECT_EQ(provider_of(n), Provider::anthropic);
  EXPECT_EQ(estimate_node_tokens(n), kAnthropicFraming.message);
}

// Content the provider does not resend counts nothing: OpenAI never receives thinking, the
// Anthropic renderer drops unsigned thinking, and Anthropic drops earlier turns' thinking for
// models before Opus 4.5 / Sonnet 4.6 (reported as prior_turn_thinking for the renderer).
TEST(Tokens, ThinkingCountsOnlyWhereResent) {
  Json signed_thinking{{"type", "thinking"}, {"thinking", std::string(400, 'q')}, {"signature", "sig"}};
  Json unsigned_thinking{{"type", "thinking"}, {"thinking", std::string(400, 'q')}};
  EXPECT_EQ(estimate_block_tokens(signed_thinking, Provider::openai), 0);
  EXPECT_EQ(estimate_block_tokens(unsigned_thinking, Provider::gemini), 0);  // Gemini CLI thoughts
  EXPECT_EQ(estimate_block_tokens(unsigned_thinking, Provider::anthropic), 0);
  const std::int64_t t = estimate_block_tokens(signed_thinking, Provider::anthropic);
  EXPECT_GT(t, 100);
  Node a;
  a.id = "a";
  a.role = "assistant";
  a.content = Json::array({signed_thinking, Json{{"type", "text"}, {"text", "done"}}});
  a.metadata = Json{{"source", {{"format", "claude-code"}}}, {"model", "claude-haiku-4-5-20251001"}};
  EXPECT_EQ(estimate_node(a).prior_turn_thinking, t);
  a.metadata["model"] = "claude-sonnet-4-5-20250929";
  EXPECT_EQ(estimate_node(a).prior_turn_thinking, t);
  a.metadata["model"] = "claude-3-7-sonnet-20250219";
  EXPECT_EQ(estimate_node(a).prior_turn_thinking, t);
  a.metadata["model"] = "claude-opus-4-20250514";
  EXPECT_EQ(estimate_node(a).prior_turn_thinking, t);
  for (const char* keeps : {"claude-opus-4-5-20251101", "claude-opus-4-6", "claude-sonnet-4-6", "some-other-model"}) {
    a.metadata["model"] = keeps;
    EXPECT_EQ(estimate_node(a).prior_turn_thinking, 0) << keeps;
  }
}

TEST(Tokens, ImageTokensFollowPixelRuleWithLongEdgeCap) {
  EXPECT_EQ(estimate_image_tokens(750, 1), 1);
  EXPECT_EQ(estimate_image_tokens(1000, 1000), 1334);  // ceil(1e6/750)
  // 3136x1764 scales to 1568x882: 1568*882/750 = 1843.97 -> 1844.
  EXPECT_EQ(estimate_image_tokens(3136, 1764), 1844);
  EXPECT_EQ(estimate_image_tokens(0, 100), kUnknownImageTokens);
  // OpenAI high detail (docs' worked examples): 1024x1024 -> 768x768, 4 tiles: 765;
  // 2048x4096 -> 768x1536, 6 tiles: 1105.
  EXPECT_EQ(estimate_image_tokens(1024, 1024, Provider::openai), 765);
  EXPECT_EQ(estimate_image_tokens(2048, 4096, Provider::openai), 1105);
  // Gemini: 258 up to 384x384, else 258 per 768x768 tile.
  EXPECT_EQ(estimate_image_tokens(300, 300, Provider::gemini), 258);
  EXPECT_EQ(estimate_image_tokens(1000, 1000, Provider::gemini), 4 * 258);
}

TEST(Tokens, ImageBlockPrefersFieldsThenDataThenUnknown) {
  Json with_fields{{"type", "image"}, {"media_type", "image/png"}, {"width", 100}, {"height", 75},
                   {"data", base64(png_header(4000, 4000))}};
  EXPECT_EQ(estimate_block_tokens(with_fields), kBlockOverhead + 10);  // 7500/750
  Json from_data{{"type", "image"}, {"media_type", "image/png"}, {"data", base64(png_header(1500, 1000))}};
  EXPECT_EQ(estimate_block_tokens(from_data), kBlockOverhead + 2000);
  Json corrupt{{"type", "image"}, {"media_type", "image/png"}, {"data", "@@@@"}};
  EXPECT_EQ(estimate_block_tokens(corrupt), kBlockOverhead + kUnknownImageTokens);
  Json by_ref{{"type", "image"}, {"media_type", "image/png"}, {"ref", "file:///x.png"}};
  EXPECT_EQ(estimate_block_tokens(by_ref), kBlockOverhead + kUnknownImageTokens);
}

// A 3 MB base64 image with tiny dimensions next to 2,000 tokens of text must not trigger a
// compaction at 50% of a 200k window: the image counts by its pixels, never its base64 length.
TEST(Tokens, HugeBase64TinyImageCountsByDimensions) {
  std::string data = base64(png_header(16, 16) + random_bytes(2'250'000));
  ASSERT_GT(data.size(), 3'000'000u);
  Node n;
  n.id = "m";
  n.role = "user";
  n.content = Json::array({Json{{"type", "text"}, {"text", std::string(8000, 'w')}},
                           Json{{"type", "image"}, {"media_type", "image/png"}, {"data", data}}});
  std::int64_t t = estimate_node_tokens(n);
  EXPECT_EQ(t, kMessageOverhead + (kBlockOverhead + estimate_text_tokens(std::string(8000, 'w'))) +
                   (kBlockOverhead + 1));  // 16*16/750 -> 1
  EXPECT_LT(t, 100'000);
}

// The reverse: 45 large screenshots count heavily, so an overflow is caught. Anthropic scales a
// 1920x1080 image to 1568x882 (1844 tokens); 45 of them exceed 80k, a 64k trigger (50% of 128k)
// fires, and they are never estimated below the provider's ~1,600-token per-image ceiling.
TEST(Tokens, FortyFiveLargeImagesCountHeavily) {
  Node n;
  n.id = "m";
  n.role = "user";
  std::string shot = base64(png_header(1920, 1080) + random_bytes(2000));
  for (int i = 0; i < 45; ++i) n.content.push_back(Json{{"type", "image"}, {"media_type", "image/png"}, {"data", shot}});
  std::int64_t t = estimate_node_tokens(n);
  EXPECT_EQ(t, kMessageOverhead + 45 * (kBlockOverhead + 1844));
  EXPECT_GT(t, 80'000);
  EXPECT_GT(t, 45 * 1600);
  // The same 45 images with undecodable data still count as unknown images, not as nothing.
  Node m = n;
  for (auto& b : m.content) b["data"] = "!!";
  EXPECT_EQ(estimate_node_tokens(m), kMessageOverhead + 45 * (kBlockOverhead + kUnknownImageTokens));
}

TEST(Tokens, ToolResultContentIsRecursedAndToolUseCountsInput) {
  std::string big_png = base64(png_header(750, 10) + random_bytes(500'000));
  const Framing& f = kAnthropicFraming;
  Json result{{"type", "tool_result"},
              {"tool_use_id", "toolu_1"},
              {"content", Json::array({Json{{"type", "text"}, {"text", std::string(40, 'x')}},
                                       Json{{"type", "image"}, {"media_type", "image/png"}, {"data", big_png}}})}};
  EXPECT_EQ(estimate_block_tokens(result),
            f.tool_result + (f.block + estimate_text_tokens(std::string(40, 'x'))) + (f.block + 10));
  Json str_result{{"type", "tool_result"}, {"tool_use_id", "abcd"}, {"content", std::string(12, 'y')}};
  EXPECT_EQ(estimate_block_tokens(str_result), f.tool_result + estimate_text_tokens(std::string(12, 'y')));
  Json use{{"type", "tool_use"}, {"id", "abcd"}, {"name", "Bash"}, {"input", Json{{"cmd", "ls"}, {"n", 3}}}};
  // name, then per argument: framing + key + value (a string as text, others as JSON)
  EXPECT_EQ(estimate_block_tokens(use), f.tool_use + estimate_text_tokens("Bash") + f.tool_key +
                                            estimate_text_tokens("cmd") + estimate_text_tokens("ls") + f.tool_key +
                                            estimate_text_tokens("n") + estimate_text_tokens("3"));
}

TEST(Tokens, OpaqueAndEventsDoNotCountTheirPayload) {
  Json opaque{{"type", "opaque"}, {"provider", "openai"}, {"data", std::string(100000, 'Z')}};
  EXPECT_EQ(estimate_block_tokens(opaque), kBlockOverhead);
  Node ev;
  ev.kind = kind::kEvent;
  ev.content = Json::array({Json{{"type", "text"}, {"text", std::string(1000, 'e')}}});
  EXPECT_EQ(estimate_node_tokens(ev), 0);
  Node empty;
  empty.role = "user";
  EXPECT_EQ(estimate_node_tokens(empty), kMessageOverhead);
}

}  // namespace
}  // namespace ctxfold
