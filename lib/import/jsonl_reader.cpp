#include "import/jsonl_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <fstream>
#include <memory>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

/// One top-level value found on a line by the bracket scan.
struct Segment {
  std::size_t begin = 0;
  std::size_t end = 0;   ///< one past the last byte
  bool complete = true;  ///< false when the line ended inside an object, array or string
  bool too_deep = false;
};

/// Splits a line into top-level JSON values without parsing them: braces and brackets are
/// counted outside strings (escapes honoured), so `{"a":"}{"}{"b":1}` gives two segments and
/// the nesting depth is known before any recursive parser sees the text. A segment that does
/// not start with `{` or `[` runs to the end of the line (a scalar or garbage).
std::vector<Segment> split_values(std::string_view s, int max_depth) {
  std::vector<Segment> out;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    while (i < n && is_ws(s[i])) ++i;
    if (i >= n) break;
    Segment seg;
    seg.begin = i;
    char c = s[i];
    if (c != '{' && c != '[') {
      std::size_t e = n;
      while (e > i && is_ws(s[e - 1])) --e;
      seg.end = e;
      out.push_back(seg);
      break;
    }
    int depth = 0;
    int max_seen = 0;
    bool in_string = false;
    bool closed = false;
    for (; i < n; ++i) {
      char ch = s[i];
      if (in_string) {
        // Jump to the next quote; it closes the string unless an odd run of backslashes
        // escapes it (the run cannot reach past the opening quote).
        const void* q = std::memchr(s.data() + i, '"', n - i);
        if (q == nullptr) {
          i = n;
          break;
        }
        i = static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
        std::size_t run = 0;
        while (s[i - 1 - run] == '\\') ++run;
        if (run % 2 == 0) in_string = false;
        continue;
      }
      if (ch == '"') {
        in_string = true;
      } else if (ch == '{' || ch == '[') {
        ++depth;
        if (depth > max_seen) max_seen = depth;
      } else if (ch == '}' || ch == ']') {
        --depth;
        if (depth <= 0) {
          ++i;
          closed = true;
          break;
        }
      }
    }
    seg.end = i;
    seg.complete = closed;
    seg.too_deep = max_seen > max_depth;
    out.push_back(seg);
  }
  return out;
}

}  // namespace

namespace {
/// The keys of the open objects seen by duplicate_key, one flat stack: raw bytes between the
/// quotes, or, when a key holds an escape, its decoded text.
struct KeyScan {
  std::vector<std::string_view> keys;  ///< the keys of every open object, innermost last
  std::vector<std::size_t> starts;     ///< per open container: where its keys begin in keys
  std::vector<char> is_object;
  std::deque<std::string> decoded;
};

/// The index of the quote that closes the string whose text starts at i (piece.size() when it is
/// cut off); escaped tells whether a backslash was met. Jumps with memchr: a record's bytes are
/// mostly string text.
std::size_t string_end(std::string_view piece, std::size_t i, bool& escaped) {
  const char* base = piece.data();
  while (i < piece.size()) {
    const auto* quote = static_cast<const char*>(std::memchr(base + i, '"', piece.size() - i));
    const std::size_t q = quote ? static_cast<std::size_t>(quote - base) : piece.size();
    const auto* slash = static_cast<const char*>(std::memchr(base + i, '\\', q - i));
    if (!slash) return q;
    escaped = true;
    i = static_cast<std::size_t>(slash - base) + 2;  // the backslash and the byte it escapes
  }
  return piece.size();
}
}  // namespace

std::optional<DuplicateKey> duplicate_key(std::string_view piece) {
  KeyScan ks;
  bool expect_key = false;
  for (std::size_t i = 0; i < piece.size(); ++i) {
    char c = piece[i];
    if (c == '"') {
      std::size_t start = i + 1;
      bool escaped = false;
      i = string_end(piece, start, escaped);
      if (!expect_key || ks.is_object.empty() || !ks.is_object.back()) continue;
      std::string_view key = piece.substr(start, i - start);
      if (escaped) {
        try {
          ks.decoded.push_back(parse_json(fmt::format("\"{}\"", key)).get<std::string>());
          key = ks.decoded.back();
        } catch (const std::exception&) {
        }
      }
      ks.keys.push_back(key);
      expect_key = false;
    } else if (c == '{' || c == '[') {
      ks.starts.push_back(ks.keys.size());
      ks.is_object.push_back(c == '{');
      expect_key = c == '{';
    } else if ((c == '}' || c == ']') && !ks.starts.empty()) {
      const auto first = ks.keys.begin() + static_cast<std::ptrdiff_t>(ks.starts.back());
      if (ks.keys.end() - first > 1) {
        std::sort(first, ks.keys.end());
        if (auto it = std::adjacent_find(first, ks.keys.end()); it != ks.keys.end())
          return DuplicateKey{std::string(*it), i};
      }
      ks.keys.erase(first, ks.keys.end());
      ks.starts.pop_back();
      ks.is_object.pop_back();
      expect_key = false;
    } else if (c == ',') {
      expect_key = !ks.is_object.empty() && ks.is_object.back();
    }
  }
  return std::nullopt;
}

std::size_t quote_huge_numbers(std::string_view piece, std::string& out, std::size_t* first) {
  out.clear();
  std::size_t replaced = 0;
  for (std::size_t i = 0; i < piece.size();) {
    char c = piece[i];
    if (c == '"') {
      std::size_t j = i + 1;
      for (; j < piece.size() && piece[j] != '"'; ++j)
        if (piece[j] == '\\') ++j;
      j = std::min(j + 1, piece.size());
      out.append(piece.substr(i, j - i));
      i = j;
      continue;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t j = i + 1;
      while (j < piece.size() && (std::isdigit(static_cast<unsigned char>(piece[j])) || piece[j] == '.' ||
                                  piece[j] == 'e' || piece[j] == 'E' || piece[j] == '+' || piece[j] == '-'))
        ++j;
      std::string token(piece.substr(i, j - i));
      double v = std::strtod(token.c_str(), nullptr);
      if (std::isinf(v)) {
        if (replaced == 0 && first) *first = i;
        out += fmt::format("\"{}\"", token);
        ++replaced;
      } else {
        out += token;
      }
      i = j;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return replaced;
}

/// Where a complete record starts after a cut-off one in `piece`: the first `{"` past the start
/// from which the rest of the piece is a run of complete, valid JSON values; 0 when there is
/// none. Tries at most 256 starts so a long corrupt line stays linear in practice.
std::size_t resync_point(std::string_view piece) {
  std::size_t tries = 0;
  for (std::size_t at = piece.find("{\"", 1); at != std::string_view::npos && tries < 256;
       at = piece.find("{\"", at + 1), ++tries) {
    std::string_view rest = piece.substr(at);
    bool all = true;
    for (const Segment& sg : split_values(rest, JsonlReader::kMaxDepth)) {
      if (!sg.complete || sg.too_deep || !nlohmann::json::accept(rest.substr(sg.begin, sg.end - sg.begin))) {
        all = false;
        break;
      }
    }
    if (all) return at;
  }
  return 0;
}

struct JsonlReader::Impl {
  std::string path;
  std::ifstream in;
  Warn warn;
  Bad on_bad;
  std::int64_t line_no = 0;
  std::uint64_t offset = 0;
  std::string buf;
  std::deque<JsonlRecord> pending;
  int at_fd = -1;  ///< second descriptor for read_at, so next() keeps its position
  std::unique_ptr<char[]> ahead;  ///< read_at's window: kAhead bytes of the file from ahead_off
  std::uint64_t ahead_off = 0;
  std::size_t ahead_len = 0;  ///< bytes of the window that hold the file (0: none yet)
  Parse parser;      ///< next() only: replaces the DOM parse when set
  std::uint64_t max_line = kDefaultMaxRecord;
  std::string chunk;          ///< bytes read from `in` and not yet consumed
  std::size_t chunk_pos = 0;

  /// One physical line from `in`, without its newline, into buf: false at end of file. A line
  /// longer than max_line is read past without being kept (buf empty, *length its size).
  bool read_line(std::uint64_t& length, bool& terminated, bool& too_long) {
    buf.clear();
    length = 0;
    too_long = false;
    bool any = false;
    for (;;) {
      if (chunk_pos == chunk.size() && !refill()) {
        terminated = false;
        return any;
      }
      any = true;
      std::string_view rest = std::string_view(chunk).substr(chunk_pos);
      std::size_t nl = rest.find('\n');
      std::string_view part = rest.substr(0, nl);
      length += part.size();
      if (!too_long && length > max_line) {
        too_long = true;
        std::string().swap(buf);
      }
      if (!too_long) buf.append(part);
      chunk_pos += part.size();
      if (nl != std::string_view::npos) {
        ++chunk_pos;
        terminated = true;
        return true;
      }
    }
  }

  /// Reads the next block of `in` into chunk; false at end of file. Throws Error(environment,
  /// "io.read") on a read error.
  bool refill() {
    chunk.resize(std::size_t{1} << 16);
    chunk_pos = 0;
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    chunk.resize(static_cast<std::size_t>(in.gcount()));
    // A read error (EIO, a vanished network file) is not the end of the file.
    if (in.bad())
      throw Error(Exit::environment, "io.read",
                  fmt::format("cannot read '{}' after byte {}", path, offset + buf.size()));
    return !chunk.empty();
  }

  /// One physical line being processed: where it is, and whether to report.
  struct LineCtx {
    const Impl& m;
    std::string_view raw_line;
    std::int64_t line;
    std::uint64_t off;
    bool last_unterminated;
    bool quiet;
    const Parse* parse;

    void report(const std::string& code, const std::string& msg) const {
      if (!quiet && m.warn) m.warn(line, code, msg);
    }
    void bad(std::string_view bytes) const {
      if (!quiet && m.on_bad) m.on_bad(line, utf8_sanitize(bytes));
    }
  };

  /// Applies every recovery rule to one physical line. `last_unterminated` marks a final line
  /// with no newline (where an incomplete value is a truncation, not corruption). With quiet
  /// set nothing is reported (read_at: the first pass already did).
  void process(std::string_view raw_line, std::int64_t line, std::uint64_t off, bool last_unterminated, bool quiet,
               std::vector<JsonlRecord>& out, const Parse* parse = nullptr) {
    const LineCtx lc{*this, raw_line, line, off, last_unterminated, quiet, parse};
    std::string owned, clean;
    std::string_view text;
    if (!clean_text(lc, owned, clean, text)) return;

    std::vector<Segment> segs = split_values(text, kMaxDepth);
    if (segs.size() > 1)
      lc.report("line.glued", fmt::format("{} records glued on one line were split", segs.size()));
    int part = 0;
    for (std::size_t k = 0; k < segs.size(); ++k) {
      const Segment& sg = segs[k];
      std::string_view piece = text.substr(sg.begin, sg.end - sg.begin);
      bool is_last = k + 1 == segs.size();
      if (sg.too_deep) {
        lc.report("line.too_deep", fmt::format("JSON nested deeper than {} levels refused", kMaxDepth));
        lc.bad(piece);
        continue;
      }
      Json value;
      bool ok = sg.complete && parse_piece(lc, piece, value);
      if (!ok) {
        if (resync(lc, text, sg, piece, part, out)) break;
        if (is_last && last_unterminated) {
          lc.report("line.truncated", fmt::format("last line cut off ({} byte(s) without a newline) "
                                                  "kept verbatim",
                                                  piece.size()));
        } else {
          lc.report("line.malformed",
                    fmt::format("unparseable text ({} byte(s)) kept verbatim", piece.size()));
        }
        lc.bad(piece);
        continue;
      }
      check_value(lc, piece);
      JsonlRecord r;
      r.line = line;
      r.offset = off;
      r.length = raw_line.size();
      r.part = part++;
      r.value = std::move(value);
      out.push_back(std::move(r));
    }
  }

  /// The line's text to split into values (text: raw_line, or owned / clean when NUL bytes or
  /// invalid UTF-8 had to go); false when nothing is left to read (blank, or only NUL bytes).
  static bool clean_text(const LineCtx& lc, std::string& owned, std::string& clean, std::string_view& text) {
    text = lc.raw_line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);

    if (text.find('\0') != std::string_view::npos) {
      owned.reserve(text.size());
      std::size_t nuls = 0;
      for (char c : text) {
        if (c == '\0')
          ++nuls;
        else
          owned.push_back(c);
      }
      bool only_ws = true;
      for (char c : owned)
        if (!is_ws(c)) only_ws = false;
      if (only_ws) {
        lc.report("line.nul", fmt::format("line of {} NUL byte(s) skipped", nuls));
        return false;
      }
      lc.report("line.nul", fmt::format("{} NUL byte(s) removed from the line", nuls));
      text = owned;
    }
    bool blank = true;
    for (char c : text)
      if (!is_ws(c)) {
        blank = false;
        break;
      }
    if (blank) return false;

    if (!utf8_valid(text)) {
      std::size_t replaced = 0;
      clean = utf8_sanitize(text, &replaced);
      lc.report("utf8.invalid", fmt::format("{} invalid UTF-8 sequence(s) replaced by U+FFFD", replaced));
      text = clean;
    }
    return true;
  }

  /// Parses one complete value's text with the caller's parser, else into value.
  static bool parse_one(const Parse* parse, std::string_view text, Json& value) {
    if (parse) return (*parse)(text);
    try {
      value = parse_json(text);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  /// Parses one complete value, retried with its lone surrogate escapes replaced and its numbers
  /// beyond a double's range quoted.
  static bool parse_piece(const LineCtx& lc, std::string_view piece, Json& value) {
    if (parse_one(lc.parse, piece, value)) return true;
    // JSON.stringify writes a string cut inside a surrogate pair as a lone `\uD800` escape,
    // which nlohmann::json refuses: read it with U+FFFD in its place.
    std::string fixed, quoted;
    std::size_t surrogates = replace_lone_surrogate_escapes(piece, fixed);
    std::string_view text = surrogates > 0 ? std::string_view(fixed) : piece;
    // nlohmann refuses a number that overflows a double (`1e999`) and with it the whole record.
    std::size_t huge = quote_huge_numbers(text, quoted);
    if (huge > 0) text = quoted;
    if ((surrogates == 0 && huge == 0) || !parse_one(lc.parse, text, value)) return false;
    if (surrogates > 0)
      lc.report("json.lone_surrogate", fmt::format("{} lone UTF-16 surrogate escape(s) replaced by U+FFFD", surrogates));
    if (huge > 0)
      lc.report("json.number_range",
                fmt::format("{} number(s) beyond the range of a double read as strings of their digits", huge));
    return true;
  }

  /// Reports what a parsed value may hide: not an object (every JSONL format holds objects), or
  /// a key written twice (the value read keeps the last; the line is kept verbatim too).
  static void check_value(const LineCtx& lc, std::string_view piece) {
    if (lc.quiet) return;
    if (piece.empty() || piece.front() != '{') {
      lc.report("record.not_object", "a JSON value that is not an object; kept verbatim");
      return;
    }
    if (auto key = duplicate_key(piece)) {
      lc.report("json.duplicate_key",
                fmt::format("key \"{}\" appears twice in one object: the last value is read, the line kept verbatim",
                            key->key));
      lc.bad(piece);
    }
  }

  /// An unparseable value that is a cut-off record with a whole record glued after it: the
  /// fragment is kept verbatim and the rest of the line read into out. False when it is not one.
  bool resync(const LineCtx& lc, std::string_view text, const Segment& sg, std::string_view piece, int& part,
              std::vector<JsonlRecord>& out) {
    // A writer that appended after a cut-off record glues a whole record
    // onto the fragment. Read the record; keep only the fragment verbatim.
    std::size_t at = resync_point(piece);
    if (at == 0) return false;
    lc.report("line.fragment", fmt::format("cut-off record ({} byte(s)) with a record glued after it: fragment "
                                           "kept verbatim, the rest read",
                                           at));
    lc.bad(piece.substr(0, at));
    std::string_view rest = text.substr(sg.begin + at);
    std::vector<JsonlRecord> more;
    process(rest, lc.line, lc.off, lc.last_unterminated, lc.quiet, more, lc.parse);
    for (auto& r : more) {
      r.offset = lc.off;
      r.length = lc.raw_line.size();
      r.part = part++;
      out.push_back(std::move(r));
    }
    return true;
  }
};

JsonlReader::JsonlReader(const std::string& path, Warn warn, Bad on_bad, std::uint64_t max_line) : impl_(new Impl) {
  impl_->path = path;
  impl_->max_line = std::max<std::uint64_t>(1, max_line);
  impl_->warn = std::move(warn);
  impl_->on_bad = std::move(on_bad);
  impl_->in.open(path, std::ios::binary);
  if (!impl_->in) {
    std::string why = std::strerror(errno);
    delete impl_;
    impl_ = nullptr;
    throw Error(Exit::environment, "io.open", fmt::format("cannot open '{}': {}", path, why));
  }
}

JsonlReader::~JsonlReader() {
  if (impl_->at_fd >= 0) ::close(impl_->at_fd);
  delete impl_;
}

bool JsonlReader::next(JsonlRecord& out) {
  Impl& m = *impl_;
  while (m.pending.empty()) {
    std::uint64_t length = 0;
    bool terminated = false, too_long = false;
    if (!m.read_line(length, terminated, too_long)) return false;  // clean end of file
    ++m.line_no;
    std::uint64_t off = m.offset;
    m.offset += length + (terminated ? 1 : 0);
    if (too_long) {
      if (m.warn)
        m.warn(m.line_no, "line.too_long",
               fmt::format("line of {} bytes is longer than the record limit of {} bytes: skipped whole "
                           "(--max-record-bytes raises the limit)",
                           length, m.max_line));
      continue;
    }
    std::vector<JsonlRecord> recs;
    m.process(m.buf, m.line_no, off, !terminated, false, recs, m.parser ? &m.parser : nullptr);
    for (auto& r : recs) m.pending.push_back(std::move(r));
  }
  out = std::move(m.pending.front());
  m.pending.pop_front();
  return true;
}

void JsonlReader::start_at(std::uint64_t offset, std::int64_t lines_before) {
  Impl& m = *impl_;
  m.in.clear();
  m.in.seekg(static_cast<std::streamoff>(offset));
  if (!m.in) throw Error(Exit::environment, "io.read", fmt::format("cannot seek to byte {} of '{}'", offset, m.path));
  m.chunk.clear();
  m.chunk_pos = 0;
  m.offset = offset;
  m.line_no = lines_before;
}

void JsonlReader::set_parser(Parse parse) { impl_->parser = std::move(parse); }

namespace {
/// read_at's window. Two-pass importers re-read their lines in file order, nearly all shorter
/// than this: one pread(2) per window instead of a seek and a read per line.
constexpr std::size_t kAhead = std::size_t{1} << 20;

/// Reads up to n bytes at off into out, as many as the file holds; throws on a read error.
std::size_t pread_full(int fd, const std::string& path, char* out, std::size_t n, std::uint64_t off) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Error(Exit::environment, "io.read", fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}
}  // namespace

Json JsonlReader::read_at(std::uint64_t offset, std::uint64_t length, int part) {
  Impl& m = *impl_;
  if (m.at_fd < 0) m.at_fd = ::open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m.at_fd < 0) throw Error(Exit::environment, "io.open", fmt::format("cannot reopen '{}'", m.path));
  std::string_view bytes;
  std::string big;  // a line longer than the window: read alone, not kept
  if (length > kAhead) {
    big.resize(static_cast<std::size_t>(length));
    big.resize(pread_full(m.at_fd, m.path, big.data(), big.size(), offset));
    bytes = big;
  } else {
    if (offset < m.ahead_off || offset + length > m.ahead_off + m.ahead_len) {
      if (!m.ahead) m.ahead.reset(new char[kAhead]);
      m.ahead_off = offset;
      m.ahead_len = pread_full(m.at_fd, m.path, m.ahead.get(), kAhead, offset);
    }
    const std::size_t from = static_cast<std::size_t>(offset - m.ahead_off);
    bytes = std::string_view(m.ahead.get() + from, std::min<std::size_t>(length, m.ahead_len - from));
  }
  // The first pass read this line and kept a record of it: most lines are one clean value, and
  // then the line's text parses as it is, to the value the recovery rules would give (they only
  // change a line that does not parse whole: NUL bytes, invalid UTF-8, glued values, lone
  // surrogate escapes, out-of-range numbers; whitespace and a final CR are JSON whitespace). So
  // parse it first, and run the rules (a second UTF-8 check and split) only when that fails.
  if (part == 0) {
    try {
      return parse_json(bytes);
    } catch (const std::exception&) {
    }
  }
  // Whether the line was the unterminated last one does not change what parses.
  std::vector<JsonlRecord> recs;
  impl_->process(bytes, 0, offset, false, true, recs);
  for (auto& r : recs)
    if (r.part == part) return std::move(r.value);
  return Json();
}

}  // namespace ctxfold
