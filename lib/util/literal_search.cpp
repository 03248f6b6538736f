#include "util/literal_search.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CTXFOLD_AVX2 1
#endif

namespace ctxfold {

namespace {
bool lower_letter(unsigned char c) { return c >= 'a' && c <= 'z'; }

#if defined(CTXFOLD_AVX2)
/// The AVX2 form of find()'s SSE2 loop (see there), 64 candidate starts per step: returns the
/// first start >= pos whose bytes at i1 and i2 match and for which eq(start) holds, or npos with
/// pos moved to the first start not yet examined (fewer than 64 remain before last).
template <class Eq>
__attribute__((target("avx2"))) std::size_t find_avx2(const char* h, std::size_t& pos, std::size_t last, std::size_t i1,
                                                      std::size_t i2, char b1, char b2, char f1, char f2, const Eq& eq) {
  const __m256i v1 = _mm256_set1_epi8(b1), v2 = _mm256_set1_epi8(b2);
  const __m256i m1 = _mm256_set1_epi8(f1), m2 = _mm256_set1_epi8(f2);
#define CTXFOLD_LOAD(at) _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + (at)))
  while (pos <= last && last - pos >= 63) {  // the loads end at pos + 63 + max(i1, i2) < size
    const __m256i c0 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(CTXFOLD_LOAD(pos + i1), m1), v1),
                                        _mm256_cmpeq_epi8(_mm256_or_si256(CTXFOLD_LOAD(pos + i2), m2), v2));
    const __m256i c1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(CTXFOLD_LOAD(pos + 32 + i1), m1), v1),
                                        _mm256_cmpeq_epi8(_mm256_or_si256(CTXFOLD_LOAD(pos + 32 + i2), m2), v2));
    const __m256i any = _mm256_or_si256(c0, c1);
    if (!_mm256_testz_si256(any, any)) {
      std::uint64_t mask = static_cast<std::uint32_t>(_mm256_movemask_epi8(c0)) |
                           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(c1))) << 32);
      while (mask) {
        const auto bit = static_cast<std::size_t>(__builtin_ctzll(mask));
        if (eq(pos + bit)) return pos + bit;
        mask &= mask - 1;
      }
    }
    pos += 64;
  }
#undef CTXFOLD_LOAD
  return std::string_view::npos;
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif
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
#if defined(CTXFOLD_AVX2)
  if (have_avx2()) {
    const std::size_t at =
        find_avx2(h, pos, last, i1_, i2_, static_cast<char>(b1), static_cast<char>(b2),
                  static_cast<char>(icase_ && lower_letter(b1) ? 0x20 : 0),
                  static_cast<char>(icase_ && lower_letter(b2) ? 0x20 : 0), [&](std::size_t p) { return equal_at(h + p); });
    if (at != std::string_view::npos) return at;
  }
#endif
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
