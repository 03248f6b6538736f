#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ctxfold {

/// Number of extended grapheme clusters (UAX #29, utf8proc) in `s`, which should be valid UTF-8
/// (an ill-formed byte counts as one cluster of its own). ASCII runs take a fast path.
std::size_t grapheme_count(std::string_view s);

/// Byte offset where grapheme number `n` (0-based) starts; s.size() when `n` >= the count.
std::size_t grapheme_byte_offset(std::string_view s, std::size_t n);

/// Unicode case folding of valid UTF-8: utf8proc_map with CASEFOLD|COMPOSE (NFC then full
/// folding), so "Über", "über" and "u\u0308ber" fold alike. ASCII runs are folded by table and only
/// the non-ASCII runs (with the ASCII character before each) go through utf8proc: the same bytes
/// as one utf8proc_map of the whole string (see is_fold_anchor).
std::string casefold(std::string_view s);

/// A fold anchor: a code point with canonical combining class 0 that is never the second (or a
/// later) element of a canonical composition or decomposition, so normalization never joins it
/// with what precedes it: ASCII, Hiragana/Katakana letters, CJK unified ideographs (BMP and
/// extension A) and precomposed Hangul syllables. Hence casefold(a + b) == casefold(a) +
/// casefold(b) whenever b starts with an anchor (checked over all code points by
/// tests/unit/recall/grep_index_test.cpp). casefold splits at ASCII anchors to fold ASCII by table; the
/// grep index uses anchors to derive a required folded substring from a case-sensitive pattern.
bool is_fold_anchor(std::uint32_t cp);

/// Case-folded text with a map back to the original: cluster k (a grapheme of the original)
/// starts at fold_start[k] in `text` and at orig_start[k] in the original.
struct FoldedText {
  std::string text;
  std::vector<std::uint32_t> fold_start;
  std::vector<std::uint32_t> orig_start;
  /// The grapheme index of the original cluster whose fold holds byte `fold_pos` of `text`.
  std::size_t grapheme_at(std::size_t fold_pos) const;
};

/// casefold() one grapheme cluster at a time, keeping the map (for offsets of -i matches).
FoldedText casefold_mapped(std::string_view s);

}  // namespace ctxfold
