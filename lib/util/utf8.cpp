#include "util/utf8.hpp"

#include <simdjson.h>

namespace ctxfold {
namespace {

// Length of the well-formed sequence starting at i, or 0 when ill-formed (RFC 3629 table).
std::size_t seq_len(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  std::size_t n = s.size();
  if (c < 0x80) return 1;
  auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return k < n && b(k) >= lo && b(k) <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0, 0xBF) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90, 0xBF) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

}  // namespace

bool utf8_valid(std::string_view s) {
  // simdjson's validator accepts exactly the sequences seq_len accepts (well-formed UTF-8,
  // RFC 3629), with SIMD: import runs every record through here. tests/unit/util/utf8_simd_test.cpp
  // compares it with utf8_sanitize, which walks seq_len.
  return simdjson::validate_utf8(s.data(), s.size());
}


std::string utf8_sanitize(std::string_view s, std::size_t* replaced) {
  std::string out;
  out.reserve(s.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = seq_len(s, i);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      ++count;
      ++i;
    }
  }
  if (replaced) *replaced = count;
  return out;
}

std::size_t utf8_safe_prefix(std::string_view s, std::size_t max_bytes) {
  if (max_bytes >= s.size()) return s.size();
  std::size_t k = max_bytes;
  while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  return k;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return out;
}

}  // namespace ctxfold
