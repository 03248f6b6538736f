#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// snapcompact's pictures of text (docs/strategies.md "snapcompact"): the archive text laid out in
// rows of fixed-width cells, cut into frames, drawn with the X11 misc-fixed 8x13 glyphs and encoded
// as PNG. Everything here is pure (no database); lib/snapcompact/archive.hpp adds the cache and the
// render blocks.
namespace ctxfold {

/// Glyph cell of the misc-fixed 8x13 font: 8 px advance, 13 px row pitch (its FONTBOUNDINGBOX).
inline constexpr int kGlyphAdvance = 8;
inline constexpr int kGlyphPitch = 13;
/// Drawn for a character the font lacks, a control character or an ill-formed byte.
inline constexpr std::uint32_t kReplacementCodepoint = 0xFFFD;
/// Tab stops every 8 columns of a row.
inline constexpr int kTabStop = 8;

/// One glyph: 13 rows of 8 pixels, bit 7 the leftmost, 1 = ink (the BDF BITMAP rows).
using Glyph = std::array<std::uint8_t, kGlyphPitch>;

/// The misc-fixed 8x13 ISO10646 font, parsed once from the BDF embedded at build time (xfonts-base
/// 8x13.pcf.gz converted with pcf2bdf). find() returns nullptr for a code point it lacks.
class Font {
 public:
  const Glyph* find(std::uint32_t cp) const;
  std::size_t size() const { return count_; }
  /// The glyph drawn for what the font cannot show (U+FFFD, which the font has).
  const Glyph& replacement() const { return *replacement_; }
  friend const Font& font_8x13();

 private:
  std::vector<Glyph> glyphs_;
  std::vector<std::int32_t> index_;  // code point -> glyphs_ position, -1 absent (BMP and beyond, dense)
  std::size_t count_ = 0;
  const Glyph* replacement_ = nullptr;
};
/// The embedded font. Throws Error(internal,"font.bdf") when the embedded BDF does not parse.
const Font& font_8x13();

/// Frame geometry for one model (glyph advance, row pitch, frame width, rows per frame,
/// clamped to the model's image edge so a frame is drawn narrower or shorter, never scaled).
struct FrameGeometry {
  int advance = kGlyphAdvance;
  int pitch = kGlyphPitch;
  int columns = 134;  ///< cells per row
  int rows = 82;      ///< rows per frame
  int width() const { return columns * advance; }
  int full_height() const { return rows * pitch; }
  /// "8x13/134x82": part of every frame cache key.
  std::string key() const;
};

/// One visual row of the laid-out text: the byte range [begin, end) of the source text it shows
/// (a source line, or a piece of a long line wrapped at a character boundary; never holds '\n').
struct Row {
  std::size_t begin = 0, end = 0;
};

/// Lays text out in rows of `columns` cells: '\n' ends a row (a "\r\n" pair too), a tab advances
/// to the next multiple of kTabStop (within the row), every other extended grapheme cluster
/// (UAX #29, utf8proc; a base and its combining marks) takes one cell; a row that is full wraps
/// before the next cluster, so a character is never cut. An ill-formed byte is a cluster of its own.
std::vector<Row> layout_rows(std::string_view text, int columns);

/// A frame: rows [first_row, first_row + row_count) of the layout.
struct Frame {
  std::size_t index = 0;
  std::size_t first_row = 0, row_count = 0;
  std::size_t begin = 0, end = 0;  ///< source byte range the frame shows (rows' first begin .. last end)
  std::int64_t chars = 0;          ///< grapheme clusters of the source range (line breaks included)
  int width = 0, height = 0;       ///< pixels: columns*advance x row_count*pitch (the last frame is shorter)
  /// sha256 over the geometry key and the frame's rows (joined by '\n'): equal rows in equal
  /// geometry give equal keys, so frames an append does not touch keep theirs.
  std::string key;
};

/// Cuts the layout into frames of geometry.rows rows each; an empty text gives no frame.
std::vector<Frame> split_frames(std::string_view text, const std::vector<Row>& rows, const FrameGeometry& g);

/// A drawn frame: 1 bit a pixel, rows of width/8 bytes (bit 7 leftmost), 1 = ink.
struct Bitmap {
  int width = 0, height = 0;
  std::vector<std::uint8_t> bits;
  bool ink(int x, int y) const { return (bits[static_cast<std::size_t>(y) * (width / 8) + x / 8] >> (7 - x % 8)) & 1; }
};

/// Draws the frame's rows with the font: cell c of row r at (c*advance, r*pitch); a cluster's base
/// glyph, then its combining marks OR-ed into the same cell; a character the font lacks, a control
/// character or an ill-formed byte is drawn as the replacement glyph and counted in *missing
/// (a mark the font lacks is counted and skipped). Right-to-left text is drawn in logical order.
Bitmap draw_frame(std::string_view text, const std::vector<Row>& rows, const Frame& f, const FrameGeometry& g,
                  std::int64_t* missing);

/// PNG bytes of a bitmap: 1-bit grayscale, black ink on white, no interlace (libpng). Throws
/// Error(internal,"png.encode") when libpng fails.
std::string encode_png(const Bitmap& b);

/// Standard base64 with padding (RFC 4648 section 4, through GNU Nettle: util/libnettle.hpp).
/// decode: nullopt for bad input (white space included). Throws Error(Exit::environment) when
/// libnettle cannot be loaded.
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace ctxfold
