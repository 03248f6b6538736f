#include "util/image.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace ctxfold {
namespace {

// ---- byte sources: the header parser asks for bytes by position and never beyond need ----

/// Raw bytes already in memory.
class RawSource {
 public:
  explicit RawSource(std::string_view b) : b_(b) {}
  bool ensure(std::size_t n) { return b_.size() >= n; }
  unsigned at(std::size_t i) const { return static_cast<unsigned char>(b_[i]); }

 private:
  std::string_view b_;
};

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;  // standard and URL-safe alphabets
  if (c == '/' || c == '_') return 63;
  return -1;
}

bool b64_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v'; }

/// Base64 text decoded lazily: ensure(n) decodes just far enough to hold n bytes. Whitespace is
/// skipped; '=' or any other non-alphabet character ends the data (what decoded so far stays).
class Base64Source {
 public:
  explicit Base64Source(std::string_view text) : text_(text) {}

  bool ensure(std::size_t n) {
    while (out_.size() < n && !done_) step();
    return out_.size() >= n;
  }
  unsigned at(std::size_t i) const { return static_cast<unsigned char>(out_[i]); }

 private:
  void step() {
    // Decode one quantum of up to four significant characters.
    std::array<int, 4> q{};
    int got = 0;
    while (got < 4 && pos_ < text_.size()) {
      char c = text_[pos_];
      if (b64_space(c)) {
        ++pos_;
        continue;
      }
      int v = b64_value(c);
      if (v < 0) {
        done_ = true;  // padding or garbage: the data ends here
        break;
      }
      q[got++] = v;
      ++pos_;
    }
    if (pos_ >= text_.size()) done_ = true;
    if (got >= 2) out_.push_back(static_cast<char>((q[0] << 2) | (q[1] >> 4)));
    if (got >= 3) out_.push_back(static_cast<char>(((q[1] & 0xf) << 4) | (q[2] >> 2)));
    if (got >= 4) out_.push_back(static_cast<char>(((q[2] & 0x3) << 6) | q[3]));
    if (got < 4) done_ = true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string out_;
  bool done_ = false;
};

template <class Src>
unsigned be16(Src& s, std::size_t i) {
  return (s.at(i) << 8) | s.at(i + 1);
}
template <class Src>
unsigned le16(Src& s, std::size_t i) {
  return s.at(i) | (s.at(i + 1) << 8);
}
template <class Src>
std::uint32_t be32(Src& s, std::size_t i) {
  return (std::uint32_t(s.at(i)) << 24) | (std::uint32_t(s.at(i + 1)) << 16) | (std::uint32_t(s.at(i + 2)) << 8) |
         std::uint32_t(s.at(i + 3));
}
template <class Src>
std::uint32_t le24(Src& s, std::size_t i) {
  return std::uint32_t(s.at(i)) | (std::uint32_t(s.at(i + 1)) << 8) | (std::uint32_t(s.at(i + 2)) << 16);
}

template <class Src>
bool starts_with(Src& s, std::size_t off, std::string_view magic) {
  if (!s.ensure(off + magic.size())) return false;
  for (std::size_t i = 0; i < magic.size(); ++i)
    if (s.at(off + i) != static_cast<unsigned char>(magic[i])) return false;
  return true;
}

std::optional<ImageDims> make_dims(std::uint64_t w, std::uint64_t h) {
  // Zero or absurd sizes (corrupt headers) are "unknown", not an estimate.
  if (w == 0 || h == 0 || w > 1'000'000 || h > 1'000'000) return std::nullopt;
  return ImageDims{static_cast<int>(w), static_cast<int>(h)};
}

template <class Src>
std::optional<ImageDims> parse_png(Src& s) {
  // 8-byte signature, then the IHDR chunk: length(4) "IHDR" width(4 BE) height(4 BE).
  if (!starts_with(s, 12, "IHDR") || !s.ensure(24)) return std::nullopt;
  return make_dims(be32(s, 16), be32(s, 20));
}

template <class Src>
std::optional<ImageDims> parse_gif(Src& s) {
  // "GIF87a"/"GIF89a", logical screen width and height as little-endian 16-bit.
  if (!s.ensure(10)) return std::nullopt;
  return make_dims(le16(s, 6), le16(s, 8));
}

template <class Src>
std::optional<ImageDims> parse_webp(Src& s) {
  // "RIFF" size "WEBP", then the first chunk at 12: "VP8 " (lossy), "VP8L" (lossless) or
  // "VP8X" (extended, canvas size). Layouts from the WebP container specification.
  if (starts_with(s, 12, "VP8 ")) {
    // chunk payload at 20: frame tag (3), start code 9d 01 2a, then 14-bit width and height.
    if (!s.ensure(30)) return std::nullopt;
    if (s.at(23) != 0x9d || s.at(24) != 0x01 || s.at(25) != 0x2a) return std::nullopt;
    return make_dims(le16(s, 26) & 0x3fff, le16(s, 28) & 0x3fff);
  }
  if (starts_with(s, 12, "VP8L")) {
    // payload at 20: signature 0x2f, then 14 bits width-1, 14 bits height-1 (little-endian bits).
    if (!s.ensure(25) || s.at(20) != 0x2f) return std::nullopt;
    std::uint32_t bits = std::uint32_t(s.at(21)) | (std::uint32_t(s.at(22)) << 8) | (std::uint32_t(s.at(23)) << 16) |
                         (std::uint32_t(s.at(24)) << 24);
    return make_dims((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
  }
  if (starts_with(s, 12, "VP8X")) {
    // payload at 20: flags(1) reserved(3), canvas width-1 (24-bit LE), canvas height-1 (24-bit LE).
    if (!s.ensure(30)) return std::nullopt;
    return make_dims(le24(s, 24) + 1, le24(s, 27) + 1);
  }
  return std::nullopt;
}

template <class Src>
std::optional<ImageDims> parse_jpeg(Src& s) {
  // Walk the marker segments after SOI until a start-of-frame (SOF0..SOF15 except DHT C4, JPG C8
  // and DAC CC) whose payload is precision(1) height(2 BE) width(2 BE). Bounded by the data:
  // every step advances at least two bytes.
  std::size_t pos = 2;
  for (;;) {
    if (!s.ensure(pos + 2)) return std::nullopt;
    if (s.at(pos) != 0xff) return std::nullopt;
    unsigned marker = s.at(pos + 1);
    if (marker == 0xff) {  // fill byte
      ++pos;
      continue;
    }
    pos += 2;
    if (marker == 0xd8 || marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;  // no length
    if (marker == 0xd9 || marker == 0xda) return std::nullopt;  // EOI / SOS before any frame header
    if (!s.ensure(pos + 2)) return std::nullopt;
    unsigned len = be16(s, pos);
    if (len < 2) return std::nullopt;
    bool sof = marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
    if (sof) {
      if (len < 7 || !s.ensure(pos + 7)) return std::nullopt;
      return make_dims(be16(s, pos + 5), be16(s, pos + 3));
    }
    pos += len;
  }
}

template <class Src>
std::optional<ImageDims> parse_image(Src& s) {
  if (starts_with(s, 0, "\x89PNG\r\n\x1a\n")) return parse_png(s);
  if (starts_with(s, 0, "GIF87a") || starts_with(s, 0, "GIF89a")) return parse_gif(s);
  if (starts_with(s, 0, "RIFF") && starts_with(s, 8, "WEBP")) return parse_webp(s);
  if (s.ensure(3) && s.at(0) == 0xff && s.at(1) == 0xd8 && s.at(2) == 0xff) return parse_jpeg(s);
  return std::nullopt;
}

}  // namespace

std::optional<ImageDims> image_dimensions(std::string_view bytes) {
  RawSource s(bytes);
  return parse_image(s);
}

std::optional<ImageDims> image_dimensions_base64(std::string_view b64) {
  // Tolerate a data: URL ("data:image/png;base64,....") and leading whitespace.
  if (b64.size() >= 5 && (b64.substr(0, 5) == "data:" || b64.substr(0, 5) == "DATA:")) {
    auto comma = b64.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    b64.remove_prefix(comma + 1);
  }
  if (b64.empty()) return std::nullopt;
  Base64Source s(b64);
  return parse_image(s);
}

}  // namespace ctxfold
