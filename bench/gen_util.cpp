// ctxfold-gen's shared pieces (gen_util.hpp).
#include "gen_util.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <stdexcept>

namespace ctxfold::gen::detail {

namespace {
struct Rng {
  std::uint64_t state;
  std::uint64_t bits = 0;
  int avail = 0;
  unsigned take(int n) {  // n <= 16
    if (avail < n) {
      state += 0x9e3779b97f4a7c15ULL;
      bits = mix64(state);
      avail = 64;
    }
    unsigned v = static_cast<unsigned>(bits & ((1u << n) - 1));
    bits >>= n;
    avail -= n;
    return v;
  }
};

constexpr char kHex[] = "0123456789abcdef";
constexpr char kB62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

bool is_uuid_shape(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Hashing: fresh ids are a pure function of (seed, segment, index of the old id in its file).

std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t key_of(std::uint64_t seed, std::uint64_t segment, std::uint64_t idx) {
  return mix64(mix64(mix64(seed) ^ segment) + idx);
}

/// A fresh id with the same shape as `old`: a uuid stays a (v4) uuid; "toolu_01…", "msg_01…",
/// "req_01…" keep their prefix and length with new base62 characters; other ids keep their
/// punctuation and character classes.
void fresh_like(const std::string& old, std::string& out, std::uint64_t key) {
  out.assign(old);
  Rng r{key};
  if (is_uuid_shape(old)) {
    for (std::size_t i = 0; i < 36; ++i)
      if (out[i] != '-') out[i] = kHex[r.take(4)];
    out[14] = '4';
    out[19] = kHex[8 + r.take(2)];
    return;
  }
  std::size_t start = 0;
  if (auto u = old.find('_'); u != std::string::npos) start = std::min(old.size(), u + 3);
  bool hex_only = true;
  for (std::size_t i = start; i < old.size(); ++i) {
    char c = old[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) hex_only = false;
  }
  for (std::size_t i = start; i < old.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(old[i]);
    if (!std::isalnum(c)) continue;
    out[i] = hex_only ? kHex[r.take(4)] : kB62[r.take(8) % 62];
  }
}

std::string fresh_uuid(std::uint64_t key) {
  std::string out;
  fresh_like("00000000-0000-0000-0000-000000000000", out, key);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Dates (Howard Hinnant's civil calendar algorithms).

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void format_date(std::int64_t z, char out[11]) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  const int yy = static_cast<int>(((y % 10000) + 10000) % 10000);
  out[0] = static_cast<char>('0' + yy / 1000);
  out[1] = static_cast<char>('0' + yy / 100 % 10);
  out[2] = static_cast<char>('0' + yy / 10 % 10);
  out[3] = static_cast<char>('0' + yy % 10);
  out[4] = '-';
  out[5] = static_cast<char>('0' + m / 10);
  out[6] = static_cast<char>('0' + m % 10);
  out[7] = '-';
  out[8] = static_cast<char>('0' + d / 10);
  out[9] = static_cast<char>('0' + d % 10);
  out[10] = '\0';
}

/// "YYYY-MM-DDThh:mm:ss[.fff]Z" -> days since 1970-01-01.
std::optional<std::int64_t> iso_days(std::string_view s) {
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
      s.back() != 'Z')
    return std::nullopt;
  auto num = [&](std::size_t at, std::size_t n) -> int {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  int y = num(0, 4), m = num(5, 2), d = num(8, 2);
  if (y < 1970 || m < 1 || m > 12 || d < 1 || d > 31) return std::nullopt;
  return days_from_civil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
}


std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(std::move(line));
  return lines;
}

}  // namespace ctxfold::gen::detail
