#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/store.hpp"

namespace ctxfold {

/// The positional trigram index grep_tri (schema 010, share/schema/010_grep_tri.sql): for every
/// run of three ASCII bytes of a node's casefold()ed searchable text, the byte offsets where it
/// starts. Because it keeps positions, an ASCII needle is answered exactly from a few of its
/// trigrams (a cover: tri_cover) without reading any text: the needle occurs at offset p of the
/// folded text exactly when each cover trigram occurs at p plus its offset in the needle.

/// A trigram key: the three bytes (each < 0x80) as b0 << 14 | b1 << 7 | b2.
using TriKey = std::uint32_t;

/// Offsets into a needle of a minimum-weight cover: the smallest sum of weight[o] over offsets
/// whose trigrams [o, o + 3) together cover every byte of a needle of weight.size() + 2 bytes.
/// The first (0) and last (size - 1) offsets are always in it. Ascending. Empty for an empty
/// weight vector.
std::vector<std::size_t> tri_cover(const std::vector<std::int64_t>& weight);

/// Accumulates one index batch's postings and writes them as grep_tri rows. A row holds the
/// postings of one trigram for consecutive nodes, cut before kRowBytes: per node
/// varint(seq delta << 1 | view), varint(byte length of its positions), then the position deltas
/// as varints (the first from 0); the length lets a reader step over a node without decoding. A row's first seq delta is from 0 (absolute), so every row decodes alone; its key is
/// (tri, last seq), so the row holding seq s is the first with last >= s.
class TriWriter {
 public:
  /// Largest size in bytes of a row's postings (unless one node's entry alone is larger): small
  /// rows let a query skip the parts of a common trigram that hold none of its candidates, and a
  /// row this size stays on its b-tree page (SQLite keeps up to about 1,000 bytes of an index
  /// b-tree cell local with 4 KiB pages; more spills into an overflow page of its own).
  static constexpr std::size_t kRowBytes = 900;

  explicit TriWriter(Db& db);
  /// Empties grep_tri and grep_tri_count (a rebuild, or rows past a state never written); the
  /// caller holds the transaction and resets grep_tri_state.
  static void clear(Db& db);
  /// Adds the ASCII trigrams of `folded` (casefold() of the node's searchable text) for node
  /// `seq`; seqs must be added in ascending order. `view`: the node is a summary/archive/notes.
  void add(std::int64_t seq, bool view, std::string_view folded);
  /// Writes the batch's rows in key order (pages fill better than in arrival order) and the
  /// per-trigram counts; call once at the batch's end, inside its transaction.
  void finish();
  std::int64_t postings() const { return postings_; }

 private:
  struct List {
    std::string buf;
    std::int64_t prev = 0;   // the last seq in buf (0: buf is empty)
    std::int64_t added = 0;  // postings added this batch (for grep_tri_count)
  };
  struct Row {
    TriKey tri;
    std::int64_t last;
    std::string post;
  };
  void close(TriKey tri, List& l);
  Db& db_;
  std::unordered_map<TriKey, List> lists_;
  std::vector<Row> rows_;            // closed rows, written sorted by finish()
  std::vector<std::uint64_t> keys_;  // scratch: tri << 40 | position, one node's
  std::string entry_;                // scratch: one node's entry
  std::int64_t postings_ = 0;
};

/// Every node with seq <= `through` whose folded text holds `needle` (ASCII bytes, at least 3:
/// casefold() of the pattern), ascending, with its view flag: exactly the nodes where
/// casefold(text).find(needle) succeeds. Reads the needle's cover trigrams only (tri_cover,
/// weighted by grep_tri_count), rarest first, skipping the rows that hold none of the remaining
/// candidates. Throws Error(bad_input,"tri.corrupt") for a row that does not decode.
void for_each_tri_hit(Store& st, std::string_view needle, std::int64_t through,
                      const std::function<void(std::int64_t seq, bool view)>& fn);

/// Whether grep_tri can answer `needle`: 3 or more bytes, all ASCII.
bool tri_answerable(std::string_view needle);

}  // namespace ctxfold
