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
/// folding), so "Über", "über" and "u\u0308ber" fold alike. ASCII-only input takes a fast path.
std::string casefold(std::string_view s);

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
