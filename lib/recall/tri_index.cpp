#include "recall/tri_index.hpp"

#include <algorithm>
#include <limits>

#include "util/error.hpp"
#include "util/varint.hpp"

namespace ctxfold {

namespace {


[[noreturn]] void corrupt(const char* what) {
  throw Error(Exit::bad_input, "tri.corrupt", std::string("a grep_tri row ") + what, "run `ctxfold index --rebuild`");
}

/// Reads grep_tri posting bytes: varints, with a check that nothing runs past the end.
struct Reader {
  const unsigned char* p;
  const unsigned char* end;
  bool done() const { return p >= end; }
  std::uint64_t varint() {
    // Most counts and seq and position deltas take one or two bytes.
    if (end - p >= 2) {
      const std::uint64_t c0 = p[0];
      if (c0 < 0x80) {
        ++p;
        return c0;
      }
      const std::uint64_t c1 = p[1];
      if (c1 < 0x80) {
        p += 2;
        return (c0 & 0x7F) | (c1 << 7);
      }
    }
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
};

constexpr TriKey key_at(std::string_view s, std::size_t i) {
  return (static_cast<TriKey>(static_cast<unsigned char>(s[i])) << 14) |
         (static_cast<TriKey>(static_cast<unsigned char>(s[i + 1])) << 7) |
         static_cast<TriKey>(static_cast<unsigned char>(s[i + 2]));
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

void TriWriter::clear(Db& db) {
  db.exec("DELETE FROM grep_tri");
  db.exec("DELETE FROM grep_tri_count");
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
    std::uint64_t prev = 0;
    for (std::size_t k = r; k < e; ++k) {
      const std::uint64_t pos = keys_[k] & kPosMask;
      put_varint(entry_, pos - prev);
      prev = pos;
    }
    if (!l.buf.empty() && l.buf.size() + entry_.size() + 8 > kRowBytes) close(tri, l);
    put_varint(l.buf, (static_cast<std::uint64_t>(seq - l.prev) << 1) | (view ? 1 : 0));
    put_varint(l.buf, entry_.size());
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

namespace {

/// A cursor over one trigram's postings in seq order, reading only the rows that can hold the
/// seqs it is asked for.
class TriCursor {
 public:
  TriCursor(Db& db, TriKey tri)
      : st_(db.prepare("SELECT last, post FROM grep_tri WHERE tri = ?1 AND last >= ?2 ORDER BY last")), tri_(tri) {}

  /// Moves to the first entry with seq >= target; false when there is none.
  bool seek(std::int64_t target) {
    if (valid_ && seq_ >= target) return true;
    if (valid_) rd_.p = pos_end_;  // past the current entry's positions
    // Rows: step while the next one is near, else seek in the b-tree.
    if (!in_row_ || last_ < target) {
      int steps = 0;
      for (;;) {
        if (!open_ || steps >= 8) {
          st_.reset();
          st_.bind(1, static_cast<std::int64_t>(tri_)).bind(2, target);
          open_ = true;
          steps = 0;
        }
        if (!st_.step()) return open_ = valid_ = in_row_ = false;
        const std::int64_t last = st_.int64(0);
        if (last <= last_) corrupt("is out of order");  // target > last_: every row read is past it
        last_ = last;
        ++steps;
        if (last_ >= target) break;
      }
      in_row_ = true;
      const std::string_view b = st_.blob(1);
      rd_ = Reader{reinterpret_cast<const unsigned char*>(b.data()), reinterpret_cast<const unsigned char*>(b.data()) + b.size()};
      seq_ = 0;
    }
    // Entries of the row: its last seq is >= target, so one of them is.
    for (;;) {
      if (rd_.done()) corrupt("ends before its last seq");
      const std::uint64_t head = rd_.varint();
      const auto delta = static_cast<std::int64_t>(head >> 1);
      if (delta == 0) corrupt("is not ascending");
      seq_ += delta;
      if (seq_ > last_) corrupt("holds a seq past its key");
      view_ = (head & 1) != 0;
      const std::uint64_t len = rd_.varint();
      if (len == 0 || len > static_cast<std::uint64_t>(rd_.end - rd_.p)) corrupt("holds a position list of a wrong length");
      pos_end_ = rd_.p + len;
      pos_ = 0;
      have_pos_ = false;
      if (seq_ >= target) break;
      rd_.p = pos_end_;
    }
    valid_ = true;
    if (seq_ == last_) in_row_ = false;  // the row's last entry: the next seek reads on
    return true;
  }
  std::int64_t seq() const { return seq_; }
  bool view() const { return view_; }
  /// Moves to the current entry's first position >= want and stores it in got; false when the
  /// entry has none. Positions are read once, ascending (the rest are skipped by the next seek).
  bool position_at_least(std::uint64_t want, std::uint64_t& got) {
    if (have_pos_ && pos_ >= want) {
      got = pos_;
      return true;
    }
    while (rd_.p < pos_end_) {
      pos_ += rd_.varint();
      if (rd_.p > pos_end_) corrupt("holds a position list of a wrong length");
      if (pos_ >= want) {
        have_pos_ = true;
        got = pos_;
        return true;
      }
    }
    have_pos_ = false;
    return false;
  }

 private:
  Stmt st_;
  TriKey tri_;
  Reader rd_{nullptr, nullptr};
  bool open_ = false;    // st_ is bound and stepped: stepping on reads the next row
  bool in_row_ = false;  // rd_ reads a row whose entries after the current one are unread
  bool valid_ = false;   // seq_, view_, pos_end_ describe the current entry
  std::int64_t last_ = 0;
  std::int64_t seq_ = 0;
  bool view_ = false;
  const unsigned char* pos_end_ = nullptr;  // the end of the current entry's positions
  std::uint64_t pos_ = 0;    // the last position read
  bool have_pos_ = false;    // pos_ is a position of the current entry
};

}  // namespace

void for_each_tri_hit(Store& st, std::string_view needle, std::int64_t through,
                      const std::function<void(std::int64_t, bool)>& fn) {
  if (!tri_answerable(needle)) return;
  Db& db = st.db();
  if (!db.has_schema_object("grep_tri")) return;
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
  std::vector<TriCursor> cur;
  cur.reserve(cover.size());
  for (const std::size_t off : cover) cur.emplace_back(db, key_at(needle, off));

  // Leapfrog: every cursor moves to the largest seq any of them is at, rarest first, until all
  // hold the same node; then the same over start offsets in that node: each cursor moves to its
  // first position at or past the largest start any of them implies (position - its offset),
  // until all imply one start: the needle occurs there.
  const std::size_t n = cur.size();
  std::int64_t target = 1;
  while (target <= through) {
    std::size_t agreed = 0;
    for (std::size_t i = 0; agreed < n; i = i + 1 == n ? 0 : i + 1) {
      if (!cur[i].seek(target)) return;
      if (cur[i].seq() > target) {
        target = cur[i].seq();
        agreed = 1;
      } else {
        ++agreed;
      }
    }
    if (target > through) return;
    std::uint64_t start = 0;
    agreed = 0;
    for (std::size_t i = 0;; i = i + 1 == n ? 0 : i + 1) {
      std::uint64_t pos = 0;
      if (!cur[i].position_at_least(start + cover[i], pos)) break;
      if (pos - cover[i] > start) {
        start = pos - cover[i];
        agreed = 1;
      } else {
        ++agreed;
      }
      if (agreed == n) {
        fn(target, cur[0].view());
        break;
      }
    }
    ++target;
  }
}

}  // namespace ctxfold
