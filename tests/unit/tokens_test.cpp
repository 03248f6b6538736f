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

TEST(Tokens, TextIsBytesOverFourRoundedUp) {
  EXPECT_EQ(estimate_text_tokens(""), 0);
  EXPECT_EQ(estimate_text_tokens("abc"), 1);
  EXPECT_EQ(estimate_text_tokens("abcd"), 1);
  EXPECT_EQ(estimate_text_tokens("abcde"), 2);
  EXPECT_EQ(estimate_text_tokens("\xF0\x9F\x98\x80"), 1);  // one emoji, 4 UTF-8 bytes
  EXPECT_EQ(estimate_block_tokens(Json{{"type", "text"}, {"text", std::string(400, 'a')}}), 100 + kBlockOverhead);
}

TEST(Tokens, ImageTokensFollowPixelRuleWithLongEdgeCap) {
  EXPECT_EQ(estimate_image_tokens(750, 1), 1);
  EXPECT_EQ(estimate_image_tokens(1000, 1000), 1334);  // ceil(1e6/750)
  // 3136x1764 scales to 1568x882: 1568*882/750 = 1843.97 -> 1844.
  EXPECT_EQ(estimate_image_tokens(3136, 1764), 1844);
  EXPECT_EQ(estimate_image_tokens(0, 100), kUnknownImageTokens);
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

// C19: a 3 MB base64 image with tiny dimensions next to 2,000 tokens of text must not trigger a
// compaction at 50% of a 200k window: the image counts by its pixels, never its base64 length.
TEST(Tokens, C19HugeBase64TinyImageCountsByDimensions) {
  std::string data = base64(png_header(16, 16) + random_bytes(2'250'000));
  ASSERT_GT(data.size(), 3'000'000u);
  Node n;
  n.id = "m";
  n.role = "user";
  n.content = Json::array({Json{{"type", "text"}, {"text", std::string(8000, 'w')}},
                           Json{{"type", "image"}, {"media_type", "image/png"}, {"data", data}}});
  std::int64_t t = estimate_node_tokens(n);
  EXPECT_EQ(t, kMessageOverhead + (kBlockOverhead + 2000) + (kBlockOverhead + 1));  // 16*16/750 -> 1
  EXPECT_LT(t, 100'000);
}

// C19 reverse: 45 large screenshots count heavily, so an overflow is caught. Anthropic scales a
// 1920x1080 image to 1568x882 (1844 tokens); 45 of them exceed 80k, a 64k trigger (50% of 128k)
// fires, and they are never estimated below the provider's ~1,600-token per-image ceiling.
TEST(Tokens, C19FortyFiveLargeImagesCountHeavily) {
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
  Json result{{"type", "tool_result"},
              {"tool_use_id", "toolu_1"},  // 7 bytes -> 2
              {"content", Json::array({Json{{"type", "text"}, {"text", std::string(40, 'x')}},
                                       Json{{"type", "image"}, {"media_type", "image/png"}, {"data", big_png}}})}};
  EXPECT_EQ(estimate_block_tokens(result), kBlockOverhead + 2 + (kBlockOverhead + 10) + (kBlockOverhead + 10));
  Json str_result{{"type", "tool_result"}, {"tool_use_id", "abcd"}, {"content", std::string(12, 'y')}};
  EXPECT_EQ(estimate_block_tokens(str_result), kBlockOverhead + 1 + 3);
  Json use{{"type", "tool_use"}, {"id", "abcd"}, {"name", "Bash"}, {"input", Json{{"cmd", "ls"}}}};
  // name 1 + id 1 + {"cmd":"ls"} (12 bytes) 3
  EXPECT_EQ(estimate_block_tokens(use), kBlockOverhead + 1 + 1 + 3);
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
