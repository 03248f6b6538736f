#include "util/literal_search.hpp"

#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ctxfold {

namespace {
bool lower_letter(unsigned char c) { return c >= 'a' && c <= 'z'; }
}  // namespace

LiteralSearch::LiteralSearch(std::string literal, bool ascii_icase)
    : literal_(std::move(literal)), icase_(ascii_icase), i2_(literal_.empty() ? 0 : literal_.size() - 1) {}

void LiteralSearch::learn(std::string_view sample) {
  const std::size_t n = literal_.size();
  for (unsigned char c : sample) ++count_[c];
  learned_ += sample.size();
  if (n == 0) return;
  auto freq = [&](std::size_t k) {
    const auto c = static_cast<unsigned char>(literal_[k]);
    return count_[c] + (icase_ && lower_letter(c) ? count_[c - 32] : 0);
  };
  std::size_t best = n - 1;
  for (std::size_t k = n - 1; k-- > 0;)
    if (freq(k) < freq(best)) best = k;
  std::size_t second = best;
  for (std::size_t k = n; k-- > 0;)
    if (k != best && (second == best || freq(k) < freq(second))) second = k;
  i1_ = best;
  i2_ = second;
}

bool LiteralSearch::byte_matches(unsigned char c, std::size_t k) const {
  if (icase_ && c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c + 32);
  return c == static_cast<unsigned char>(literal_[k]);
}

bool LiteralSearch::equal_at(const char* p) const {
  if (!icase_) return std::memcmp(p, literal_.data(), literal_.size()) == 0;
  for (std::size_t k = 0; k < literal_.size(); ++k)
    if (!byte_matches(static_cast<unsigned char>(p[k]), k)) return false;
  return true;
}

std::size_t LiteralSearch::find(std::string_view hay, std::size_t from) const {
  const std::size_t n = literal_.size();
  if (n == 0 || hay.size() < n || from > hay.size() - n) return std::string_view::npos;
  const std::size_t last = hay.size() - n;  // the last possible start
  const char* h = hay.data();
  std::size_t pos = from;
#if defined(__SSE2__)
  // 16 candidate starts at a time: the bytes at offsets i1_ and i2_ of each candidate, compared
  // at once. Upper-case ASCII is OR-ed with 0x20 where the literal's byte is a lower-case letter
  // (x | 0x20 == b exactly for x == b and x == b - 32). The loads end at last + n - 1 < size.
  const auto b1 = static_cast<unsigned char>(literal_[i1_]);
  const auto b2 = static_cast<unsigned char>(literal_[i2_]);
  const __m128i v1 = _mm_set1_epi8(static_cast<char>(b1));
  const __m128i v2 = _mm_set1_epi8(static_cast<char>(b2));
  const __m128i f1 = _mm_set1_epi8(icase_ && lower_letter(b1) ? 0x20 : 0);
  const __m128i f2 = _mm_set1_epi8(icase_ && lower_letter(b2) ? 0x20 : 0);
  while (pos <= last && last - pos >= 15) {
    const __m128i a = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + pos + i1_)), f1);
    const __m128i b = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + pos + i2_)), f2);
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, v1), _mm_cmpeq_epi8(b, v2))));
    while (mask) {
      const auto bit = static_cast<std::size_t>(__builtin_ctz(mask));
      if (equal_at(h + pos + bit)) return pos + bit;
      mask &= mask - 1;
    }
    pos += 16;
  }
#endif
  for (; pos <= last; ++pos)
    if (byte_matches(static_cast<unsigned char>(h[pos + i1_]), i1_) && equal_at(h + pos)) return pos;
  return std::string_view::npos;
}

}  // namespace ctxfold
