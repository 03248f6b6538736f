#include "snapcompact/frames.hpp"

#include <fmt/format.h>
#include <png.h>
#include <utf8proc.h>

#include <charconv>
#include <csetjmp>

#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/libnettle.hpp"

namespace ctxfold {

std::string_view embedded_font_bdf();  // generated at build time (cmake/snapcompact_assets.cmake)

namespace {

[[noreturn]] void bad_bdf(std::size_t line, const std::string& what) {
  throw Error(Exit::internal, "font.bdf", fmt::format("embedded 8x13 BDF, line {}: {}", line, what));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

/// One cluster of a row: its end and up to four code points (a base and its first marks).
struct Cluster {
  std::size_t end = 0;
  std::uint32_t cps[4] = {0, 0, 0, 0};
  int n = 0;
  bool invalid = false;
};

/// The extended grapheme cluster at pos, not reaching past limit.
Cluster next_cluster(std::string_view s, std::size_t pos, std::size_t limit) {
  Cluster c;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  unsigned char b = static_cast<unsigned char>(s[pos]);
  if (b < 0x80 && (pos + 1 >= limit || static_cast<unsigned char>(s[pos + 1]) < 0x80) && b != '\r') {
    c.end = pos + 1;  // ASCII followed by ASCII (or the end): one cluster
    c.cps[0] = b;
    c.n = 1;
    return c;
  }
  utf8proc_int32_t cp = 0;
  auto len = utf8proc_iterate(p + pos, static_cast<utf8proc_ssize_t>(limit - pos), &cp);
  if (len <= 0) {
    c.end = pos + 1;
    c.cps[0] = kReplacementCodepoint;
    c.n = 1;
    c.invalid = true;
    return c;
  }
  c.cps[c.n++] = static_cast<std::uint32_t>(cp);
  std::size_t q = pos + static_cast<std::size_t>(len);
  utf8proc_int32_t state = 0, prev = cp;
  while (q < limit) {
    utf8proc_int32_t nx = 0;
    auto l = utf8proc_iterate(p + q, static_cast<utf8proc_ssize_t>(limit - q), &nx);
    if (l <= 0 || utf8proc_grapheme_break_stateful(prev, nx, &state)) break;
    if (c.n < 4) c.cps[c.n++] = static_cast<std::uint32_t>(nx);
    q += static_cast<std::size_t>(l);
    prev = nx;
  }
  c.end = q;
  return c;
}

bool is_tab(const Cluster& c) { return c.n == 1 && c.cps[0] == '\t'; }
bool is_control(std::uint32_t cp) { return cp < 0x20 || (cp >= 0x7f && cp < 0xa0); }

}  // namespace

const Glyph* Font::find(std::uint32_t cp) const {
  if (cp >= index_.size() || index_[cp] < 0) return nullptr;
  return &glyphs_[static_cast<std::size_t>(index_[cp])];
}

const Font& font_8x13() {
  static const Font font = [] {
    Font f;
    std::string_view bdf = embedded_font_bdf();
    std::size_t pos = 0, line_no = 0;
    auto next_line = [&]() -> std::optional<std::string_view> {
      if (pos >= bdf.size()) return std::nullopt;
      std::size_t e = bdf.find('\n', pos);
      if (e == std::string_view::npos) e = bdf.size();
      std::string_view l = trim(bdf.substr(pos, e - pos));
      pos = e + 1;
      ++line_no;
      return l;
    };
    std::vector<std::pair<std::uint32_t, Glyph>> all;
    std::uint32_t max_cp = 0;
    while (auto l = next_line()) {
      if (l->rfind("STARTCHAR", 0) != 0) continue;
      long enc = -1;
      int bbx_w = 0, bbx_h = 0, bbx_x = 0, bbx_y = 0;
      Glyph g{};
      bool done = false;
      while (auto m = next_line()) {
        if (m->rfind("ENCODING ", 0) == 0) {
          enc = std::strtol(std::string(m->substr(9)).c_str(), nullptr, 10);
        } else if (m->rfind("BBX ", 0) == 0) {
          if (std::sscanf(std::string(m->substr(4)).c_str(), "%d %d %d %d", &bbx_w, &bbx_h, &bbx_x, &bbx_y) != 4)
            bad_bdf(line_no, "malformed BBX");
        } else if (*m == "BITMAP") {
          // Glyph rows from the top of the 13-px cell: FONTBOUNDINGBOX 8 13 0 -2 (ascent 11).
          const int top = (kGlyphPitch - 2) - (bbx_y + bbx_h);
          for (int r = 0; r < bbx_h; ++r) {
            auto row = next_line();
            if (!row) bad_bdf(line_no, "truncated BITMAP");
            unsigned v = 0;
            std::from_chars(row->data(), row->data() + std::min<std::size_t>(row->size(), 2), v, 16);
            const int y = top + r;
            if (y >= 0 && y < kGlyphPitch) g[static_cast<std::size_t>(y)] = static_cast<std::uint8_t>(v >> (bbx_x > 0 ? bbx_x : 0));
          }
        } else if (*m == "ENDCHAR") {
          done = true;
          break;
        }
      }
      if (!done) bad_bdf(line_no, "glyph without ENDCHAR");
      if (enc < 0 || bbx_w > kGlyphAdvance) continue;
      all.emplace_back(static_cast<std::uint32_t>(enc), g);
      max_cp = std::max(max_cp, static_cast<std::uint32_t>(enc));
    }
    f.index_.assign(max_cp + 1, -1);
    f.glyphs_.reserve(all.size());
    for (auto& [cp, g] : all) {
      f.index_[cp] = static_cast<std::int32_t>(f.glyphs_.size());
      f.glyphs_.push_back(g);
    }
    f.count_ = f.glyphs_.size();
    f.replacement_ = f.find(kReplacementCodepoint);
    if (!f.replacement_ || f.find('A') == nullptr) bad_bdf(line_no, "the font lacks U+FFFD or 'A'");
    return f;
  }();
  return font;
}

std::string FrameGeometry::key() const { return fmt::format("{}x{}/{}x{}", advance, pitch, columns, rows); }

std::vector<Row> layout_rows(std::string_view text, int columns) {
  std::vector<Row> rows;
  if (columns < 1) columns = 1;
  std::size_t ls = 0;
  while (ls <= text.size()) {
    std::size_t le = text.find('\n', ls);
    const bool last = le == std::string_view::npos;
    if (last) le = text.size();
    if (last && ls == le && ls == text.size() && !rows.empty()) break;  // text ending in '\n'
    std::size_t content_end = le > ls && text[le - 1] == '\r' ? le - 1 : le;
    std::size_t row_start = ls, p = ls;
    int col = 0;
    while (p < content_end) {
      Cluster c = next_cluster(text, p, content_end);
      if (col >= columns) {
        rows.push_back(Row{row_start, p});
        row_start = p;
        col = 0;
      }
      col += is_tab(c) ? std::min(kTabStop - col % kTabStop, columns - col) : 1;
      p = c.end;
    }
    rows.push_back(Row{row_start, content_end});
    if (last) break;
    ls = le + 1;
  }
  if (text.empty()) rows.clear();
  return rows;
}

std::vector<Frame> split_frames(std::string_view text, const std::vector<Row>& rows, const FrameGeometry& g) {
  std::vector<Frame> out;
  const std::size_t per = static_cast<std::size_t>(std::max(1, g.rows));
  const std::string gkey = g.key();
  for (std::size_t first = 0; first < rows.size(); first += per) {
    Frame f;
    f.index = out.size();
    f.first_row = first;
    f.row_count = std::min(per, rows.size() - first);
    f.begin = out.empty() ? 0 : out.back().end;
    const std::size_t last = first + f.row_count - 1;
    // The frame's source reaches to the next frame's first row (its line break included).
    f.end = last + 1 < rows.size() ? rows[last + 1].begin : text.size();
    f.width = g.width();
    f.height = static_cast<int>(f.row_count) * g.pitch;
    Sha256 h;
    h.update(gkey);
    for (std::size_t r = first; r <= last; ++r) {
      h.update("\n");
      h.update(text.substr(rows[r].begin, rows[r].end - rows[r].begin));
    }
    f.key = h.hex();
    std::int64_t chars = 0;
    for (std::size_t p = f.begin; p < f.end; ++chars) p = next_cluster(text, p, f.end).end;
    f.chars = chars;
    out.push_back(std::move(f));
  }
  return out;
}

Bitmap draw_frame(std::string_view text, const std::vector<Row>& rows, const Frame& f, const FrameGeometry& g,
                  std::int64_t* missing) {
  const Font& font = font_8x13();
  Bitmap b;
  b.width = g.columns * kGlyphAdvance;
  b.height = static_cast<int>(f.row_count) * kGlyphPitch;
  const std::size_t stride = static_cast<std::size_t>(g.columns);
  b.bits.assign(stride * static_cast<std::size_t>(b.height), 0);
  std::int64_t miss = 0;
  for (std::size_t r = 0; r < f.row_count; ++r) {
    const Row& row = rows[f.first_row + r];
    std::uint8_t* base = b.bits.data() + r * kGlyphPitch * stride;
    int col = 0;
    for (std::size_t p = row.begin; p < row.end && col < g.columns;) {
      Cluster c = next_cluster(text, p, row.end);
      p = c.end;
      if (is_tab(c)) {
        col += std::min(kTabStop - col % kTabStop, g.columns - col);
        continue;
      }
      const Glyph* gl = c.invalid || is_control(c.cps[0]) ? nullptr : font.find(c.cps[0]);
      if (!gl) {
        gl = &font.replacement();
        ++miss;
      }
      Glyph cell = *gl;
      for (int k = 1; k < c.n; ++k) {
        if (const Glyph* mark = font.find(c.cps[k]))
          for (int y = 0; y < kGlyphPitch; ++y) cell[static_cast<std::size_t>(y)] |= (*mark)[static_cast<std::size_t>(y)];
        else
          ++miss;
      }
      for (int y = 0; y < kGlyphPitch; ++y) base[static_cast<std::size_t>(y) * stride + static_cast<std::size_t>(col)] = cell[static_cast<std::size_t>(y)];
      ++col;
    }
  }
  if (missing) *missing += miss;
  return b;
}

namespace {
void png_append(png_structp png, png_bytep data, png_size_t len) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), len);
}
void png_flush_noop(png_structp) {}

// The rows are written outside the function that calls setjmp: gcc 12 at -O3 failed with an internal
// compiler error ("SSA corruption") when the row loop shared a frame with setjmp.
[[gnu::noinline]] void write_png(png_structp png, png_infop info, const Bitmap& b, std::string* out, std::uint8_t* row) {
  const std::size_t stride = static_cast<std::size_t>(b.width) / 8;
  png_set_write_fn(png, out, png_append, png_flush_noop);
  png_set_IHDR(png, info, static_cast<png_uint_32>(b.width), static_cast<png_uint_32>(b.height), 1, PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_write_info(png, info);
  for (int y = 0; y < b.height; ++y) {
    const std::uint8_t* src = b.bits.data() + static_cast<std::size_t>(y) * stride;
    for (std::size_t i = 0; i < stride; ++i) row[i] = static_cast<std::uint8_t>(~src[i]);  // gray 1 = white paper
    png_write_row(png, row);
  }
  png_write_end(png, nullptr);
}
}  // namespace

std::string encode_png(const Bitmap& b) {
  std::string out;
  std::vector<std::uint8_t> row(static_cast<std::size_t>(b.width) / 8);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) throw Error(Exit::internal, "png.encode", "libpng: cannot create a write struct");
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    throw Error(Exit::internal, "png.encode", "libpng failed to encode a frame");
  }
  write_png(png, info, b, &out, row.data());
  png_destroy_write_struct(&png, &info);
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out(BASE64_ENCODE_RAW_LENGTH(bytes.size()), '\0');
  libnettle().base64_encode_raw(out.data(), bytes.size(), reinterpret_cast<const std::uint8_t*>(bytes.data()));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  // Whole groups of four, and nothing Nettle would skip (it ignores white space): what
  // base64_encode writes.
  if (text.size() % 4 != 0) return std::nullopt;
  for (char c : text)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return std::nullopt;
  const LibNettle& nettle = libnettle();
  base64_decode_ctx ctx;
  nettle.base64_decode_init(&ctx);
  std::string out(BASE64_DECODE_LENGTH(text.size()), '\0');
  std::size_t n = 0;
  if (nettle.base64_decode_update(&ctx, &n, reinterpret_cast<std::uint8_t*>(out.data()), text.size(), text.data()) != 1 ||
      nettle.base64_decode_final(&ctx) != 1)
    return std::nullopt;
  out.resize(n);
  return out;
}

}  // namespace ctxfold
