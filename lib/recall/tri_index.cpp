#include "recall/tri_index.hpp"

#include <algorithm>
#include <limits>

#include "util/error.hpp"

namespace ctxfold {

namespace {

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

[[noreturn]] void corrupt(const char* what) {
  throw Error(Exit::bad_input, "tri.corrupt", std::string("a grep_tri row ") + what, "run `ctxfold index --rebuild`");
}

/// Reads grep_tri posting bytes: varints, with a check that nothing runs past the end.
struct Reader {
  const unsigned char* p;
  const unsigned char* end;
  bool done() const { return p >= end; }
  std::uint64_t varint() {
    if (p < end && *p < 0x80) return *p++;  // most position deltas and counts are one byte
    return varint_slow();
  }
  std::uint64_t varint_slow() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) corrupt("is cut short");
      const unsigned char c = *p++;
      v |= static_cast<std::uint64_t>(c & 0x7F) << shift;
      if (!(c & 0x80)) return v;
    }
    corrupt("holds an over-long varint");
  }
  /// Skips n varints.
  void skip(std::uint64_t n) {
    while (n > 0) {
      if (p >= end) corrupt("is cut short");
      if (!(*p++ & 0x80)) --n;
    }
  }
};

constexpr TriKey key_at(std::string_view s, std::size_t i) {
  return (static_cast<TriKey>(static_cast<unsigned char>(s[i])) << 14) |
         (static_cast<TriKey>(static_cast<unsigned char>(s[i + 1])) << 7) |
         static_cast<TriKey>(static_cast<unsigned char>(s[i + 2]));
}

bool table_exists(Db& db, const char* name) {
  auto q = db.prepare("SELECT 1 FROM sqlite_master WHERE name=?1");
  q.bind(1, name);
  return q.step();
}

}  // namespace

bool tri_answerable(std::string_view needle) {
  return needle.size() >= 3 &&
         std::all_of(needle.begin(), needle.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::vector<std::size_t> tri_cover(const std::vector<std::int64_t>& weight) {
  const std::size_t n = weight.size();
  if (n == 0) return {};
  // best[o]: the lightest cover of bytes [0, o + 3) whose last trigram starts at o; trigrams that
  // start 1 to 3 bytes apart leave no byte between them uncovered.
  constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max() / 4;
  std::vector<std::int64_t> best(n, kInf);
  std::vector<std::size_t> from(n, 0);
  best[0] = weight[0];
  for (std::size_t o = 1; o < n; ++o) {
    for (std::size_t d = 1; d <= 3 && d <= o; ++d) {
      if (best[o - d] + weight[o] < best[o]) {
        best[o] = best[o - d] + weight[o];
        from[o] = o - d;
      }
    }
  }
  std::vector<std::size_t> out;
  for (std::size_t o = n - 1;; o = from[o]) {
    out.push_back(o);
    if (o == 0) break;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

TriWriter::TriWriter(Db& db) : db_(db) {}

void TriWriter::add(std::int64_t seq, bool view, std::string_view folded) {
  keys_.clear();
  for (std::size_t i = 0; i + 2 < folded.size(); ++i) {
    const auto a = static_cast<unsigned char>(folded[i]), b = static_cast<unsigned char>(folded[i + 1]),
               c = static_cast<unsigned char>(folded[i + 2]);
    if ((a | b | c) & 0x80) continue;
    keys_.push_back(static_cast<std::uint64_t>(key_at(folded, i)) << 40 | i);
  }
  std::sort(keys_.begin(), keys_.end());
  constexpr std::uint64_t kPosMask = (std::uint64_t{1} << 40) - 1;
  for (std::size_t r = 0; r < keys_.size();) {
    const TriKey tri = static_cast<TriKey>(keys_[r] >> 40);
    std::size_t e = r;
    while (e < keys_.size() && (keys_[e] >> 40) == tri) ++e;
    List& l = lists_[tri];
    entry_.clear();
    put_varint(entry_, e - r);
    std::uint64_t prev = 0;
    for (std::size_t k = r; k < e; ++k) {
      const std::uint64_t pos = keys_[k] & kPosMask;
      put_varint(entry_, pos - prev);
      prev = pos;
    }
    if (!l.buf.empty() && l.buf.size() + entry_.size() + 5 > kRowBytes) close(tri, l);
    put_varint(l.buf, (static_cast<std::uint64_t>(seq - l.prev) << 1) | (view ? 1 : 0));
    l.buf += entry_;
    l.prev = seq;
    l.added += static_cast<std::int64_t>(e - r);
    postings_ += static_cast<std::int64_t>(e - r);
    r = e;
  }
}

void TriWriter::close(TriKey tri, List& l) {
  rows_.push_back(Row{tri, l.prev, std::move(l.buf)});
  l.buf.clear();
  l.prev = 0;
}

void TriWriter::finish() {
  auto& count = db_.cached(
      "INSERT INTO grep_tri_count(tri, postings) VALUES (?1, ?2) "
      "ON CONFLICT(tri) DO UPDATE SET postings = postings + excluded.postings");
  for (auto& [tri, l] : lists_) {
    if (!l.buf.empty()) close(tri, l);
    if (l.added == 0) continue;
    ResetOnExit reset(count);
    count.bind(1, static_cast<std::int64_t>(tri)).bind(2, l.added);
    count.run();
  }
  lists_.clear();
  std::sort(rows_.begin(), rows_.end(),
            [](const Row& a, const Row& b) { return a.tri != b.tri ? a.tri < b.tri : a.last < b.last; });
  auto& put = db_.cached("INSERT INTO grep_tri(tri, last, post) VALUES (?1, ?2, ?3)");
  for (const Row& r : rows_) {
    ResetOnExit reset(put);
    put.bind(1, static_cast<std::int64_t>(r.tri)).bind(2, r.last).bind_blob(3, r.post);
    put.run();
  }
  rows_.clear();
}

void for_each_tri_hit(Store& st, std::string_view needle, std::int64_t through,
                      const std::function<void(std::int64_t, bool)>& fn) {
  if (!tri_answerable(needle)) return;
  Db& db = st.db();
  if (!table_exists(db, "grep_tri")) return;
  const std::size_t ntri = needle.size() - 2;
  std::vector<std::int64_t> weight(ntri, 0);
  {
    auto& c = db.cached("SELECT postings FROM grep_tri_count WHERE tri = ?1");
    for (std::size_t o = 0; o < ntri; ++o) {
      ResetOnExit reset(c);
      c.bind(1, static_cast<std::int64_t>(key_at(needle, o)));
      if (!c.step()) return;  // a trigram no node holds: no node holds the needle
      weight[o] = c.int64(0);
    }
  }
  std::vector<std::size_t> cover = tri_cover(weight);
  std::stable_sort(cover.begin(), cover.end(), [&](std::size_t a, std::size_t b) { return weight[a] < weight[b]; });

  // The candidates, ascending by seq: each with the offsets where the needle may start in its
  // folded text (anchors[abeg[i] .. abeg[i + 1])). Offsets fit 32 bits: a node's text is at most
  // SQLite's largest value (SQLITE_MAX_LENGTH, 10^9 bytes by default, 2^31 - 1 at most).
  std::vector<std::int64_t> seq;
  std::vector<char> view;
  std::vector<std::size_t> abeg{0};
  std::vector<std::uint32_t> anchors;
  std::vector<std::int64_t> seq2;
  std::vector<char> view2;
  std::vector<std::size_t> abeg2;
  std::vector<std::uint32_t> anchors2;

  auto rows = db.prepare("SELECT last, post FROM grep_tri WHERE tri = ?1 AND last >= ?2 ORDER BY last");
  bool first = true;
  for (const std::size_t off : cover) {
    // At most one candidate and one anchor per posting of the rarest trigram, then no more than
    // the candidates already found.
    const std::size_t bound = first ? static_cast<std::size_t>(std::max<std::int64_t>(0, weight[off])) : seq.size();
    seq2.reserve(bound);
    view2.reserve(bound);
    abeg2.reserve(bound + 1);
    anchors2.reserve(first ? bound : anchors.size());
    rows.reset();
    rows.bind(1, static_cast<std::int64_t>(key_at(needle, off))).bind(2, first ? 0 : seq.front());
    seq2.clear();
    view2.clear();
    abeg2.assign(1, 0);
    anchors2.clear();
    std::size_t ci = 0;        // the next candidate (not first)
    std::int64_t prev_last = 0;
    int skipped = 0;
    while (rows.step()) {
      const std::int64_t last = rows.int64(0);
      if (last <= prev_last) corrupt("is out of order");
      if (!first) {
        if (ci == seq.size()) break;
        if (seq[ci] > last) {  // no candidate in this row: step on, or seek when it is far
          prev_last = last;
          if (++skipped >= 8) {
            rows.reset();
            rows.bind(1, static_cast<std::int64_t>(key_at(needle, off))).bind(2, seq[ci]);
            skipped = 0;
          }
          continue;
        }
      }
      skipped = 0;
      prev_last = last;
      const std::string_view b = rows.blob(1);
      Reader rd{reinterpret_cast<const unsigned char*>(b.data()), reinterpret_cast<const unsigned char*>(b.data()) + b.size()};
      std::int64_t s = 0;
      while (!rd.done()) {
        const std::uint64_t head = rd.varint();
        const auto delta = static_cast<std::int64_t>(head >> 1);
        if (delta == 0) corrupt("is not ascending");
        s += delta;
        const std::uint64_t count = rd.varint();
        if (s > through || s > last) {
          if (s > last) corrupt("holds a seq past its key");
          rd.skip(count);
          continue;
        }
        if (first) {
          std::uint64_t pos = 0;
          const std::size_t before = anchors2.size();
          for (std::uint64_t k = 0; k < count; ++k) {
            pos += rd.varint();
            if (pos >= off) anchors2.push_back(static_cast<std::uint32_t>(pos - off));
          }
          if (anchors2.size() > before) {
            seq2.push_back(s);
            view2.push_back(static_cast<char>(head & 1));
            abeg2.push_back(anchors2.size());
          }
          continue;
        }
        while (ci < seq.size() && seq[ci] < s) ++ci;  // candidates this trigram does not hold
        if (ci == seq.size() || seq[ci] != s) {
          rd.skip(count);
          continue;
        }
        // Keep the anchors a of candidate ci with a + off among the positions.
        const std::size_t before = anchors2.size();
        std::size_t a = abeg[ci];
        const std::size_t aend = abeg[ci + 1];
        std::uint64_t pos = 0;
        std::uint64_t k = 0;
        for (; k < count && a < aend; ++k) {
          pos += rd.varint();
          while (a < aend && anchors[a] + off < pos) ++a;
          if (a < aend && anchors[a] + off == pos) anchors2.push_back(anchors[a++]);
        }
        rd.skip(count - k);
        if (anchors2.size() > before) {
          seq2.push_back(s);
          view2.push_back(view[ci]);
          abeg2.push_back(anchors2.size());
        }
        ++ci;
      }
      if (!first) while (ci < seq.size() && seq[ci] <= last) ++ci;
    }
    rows.reset();
    seq.swap(seq2);
    view.swap(view2);
    abeg.swap(abeg2);
    anchors.swap(anchors2);
    first = false;
    if (seq.empty()) return;
  }
  for (std::size_t i = 0; i < seq.size(); ++i) fn(seq[i], view[i] != 0);
}

}  // namespace ctxfold
