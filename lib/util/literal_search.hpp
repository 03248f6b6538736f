#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace ctxfold {

/// Substring search for one literal over large byte strings (grep's scan of the text packs).
/// Candidates come from comparing two of the literal's bytes, the rarest ones in a sample of
/// the text, against 64 positions at a time (AVX2, where the CPU has it), else 16 (SSE2; a byte
/// loop elsewhere); each candidate is then
/// compared whole. With `ascii_icase` the literal must hold no upper-case ASCII letter and a
/// lower-case one also matches its upper-case form (every other byte, UTF-8 included, matches
/// itself only): the same as searching the literal in the ASCII-lowered text, without lowering it.
class LiteralSearch {
 public:
  /// `literal` must not be empty.
  LiteralSearch(std::string literal, bool ascii_icase);

  /// Counts the bytes of `sample` (any text like the one searched) and picks the two bytes
  /// candidates are compared on: the literal's rarest by the counts of every sample given so far
  /// (ties go to the later byte). Optional: without it the first and last bytes are used. Never
  /// changes what find() returns, only how fast.
  void learn(std::string_view sample);
  /// Bytes counted by learn() so far.
  std::size_t learned() const { return learned_; }

  /// Offset of the first occurrence in `hay` starting at or after `from`, or npos.
  std::size_t find(std::string_view hay, std::size_t from = 0) const;

  const std::string& literal() const { return literal_; }

 private:
  bool equal_at(const char* p) const;
  bool byte_matches(unsigned char c, std::size_t k) const;

  std::string literal_;
  bool icase_ = false;
  std::size_t i1_ = 0, i2_ = 0;  ///< offsets in literal_ of the two compared bytes (may be equal)
  std::array<std::size_t, 256> count_{};
  std::size_t learned_ = 0;
};

}  // namespace ctxfold
