#include "util/graphemes.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

namespace ctxfold {

namespace {

/// Calls fn(start, end) for each grapheme cluster of s, in order.
template <class F>
void each_grapheme(std::string_view s, F&& fn) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const std::size_t start = i;
    const unsigned char c = p[i];
    // Two ASCII characters always have a break between them, except CR LF.
    if (c < 0x80 && (i + 1 == n || (p[i + 1] < 0x80 && !(c == '\r' && p[i + 1] == '\n')))) {
      ++i;
      if (!fn(start, i)) return;
      continue;
    }
    utf8proc_int32_t prev = 0;
    utf8proc_int32_t state = 0;
    utf8proc_ssize_t len = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(n - i), &prev);
    if (len < 1) {  // ill-formed byte: a cluster of its own
      ++i;
      if (!fn(start, i)) return;
      continue;
    }
    i += static_cast<std::size_t>(len);
    while (i < n) {
      utf8proc_int32_t next = 0;
      utf8proc_ssize_t l = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(n - i), &next);
      if (l < 1) break;
      if (utf8proc_grapheme_break_stateful(prev, next, &state)) break;
      i += static_cast<std::size_t>(l);
      prev = next;
    }
    if (!fn(start, i)) return;
  }
}

void fold_ascii(std::string_view s, std::string& out) {
  for (char c : s) out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
}

void fold_map(std::string_view s, std::string& out) {
  utf8proc_uint8_t* dst = nullptr;
  utf8proc_ssize_t len = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                      static_cast<utf8proc_ssize_t>(s.size()), &dst,
                                      static_cast<utf8proc_option_t>(UTF8PROC_CASEFOLD | UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  if (len < 0) {  // ill-formed input: keep the bytes (callers sanitize first)
    out.append(s);
    return;
  }
  out.append(reinterpret_cast<const char*>(dst), static_cast<std::size_t>(len));
  std::free(dst);
}

/// Folds s in pieces split before ASCII characters (fold anchors, see is_fold_anchor): ASCII runs
/// by table, each non-ASCII run together with the ASCII character before it (which a combining
/// mark may compose with) through utf8proc. Equal to one utf8proc_map of the whole string.
void fold_into(std::string_view s, std::string& out) {
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i;
    while (j < n && static_cast<unsigned char>(s[j]) < 0x80) ++j;
    if (j == n) {
      fold_ascii(s.substr(i), out);
      return;
    }
    // s[j] starts a non-ASCII run; the ASCII character before it (if any) goes with it.
    std::size_t seg = j > i ? j - 1 : j;
    fold_ascii(s.substr(i, seg - i), out);
    std::size_t k = j;
    while (k < n && static_cast<unsigned char>(s[k]) >= 0x80) ++k;
    fold_map(s.substr(seg, k - seg), out);
    i = k;
  }
}

}  // namespace

bool is_fold_anchor(std::uint32_t cp) {
  return cp < 0x80 || (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FA) ||
         (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7A3);
}

std::size_t grapheme_count(std::string_view s) {
  std::size_t count = 0;
  each_grapheme(s, [&](std::size_t, std::size_t) {
    ++count;
    return true;
  });
  return count;
}

std::size_t grapheme_byte_offset(std::string_view s, std::size_t n) {
  if (n == 0) return 0;
  std::size_t seen = 0;
  std::size_t at = s.size();
  each_grapheme(s, [&](std::size_t start, std::size_t) {
    if (seen == n) {
      at = start;
      return false;
    }
    ++seen;
    return true;
  });
  return at;
}

std::string casefold(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  fold_into(s, out);
  return out;
}

std::size_t FoldedText::grapheme_at(std::size_t fold_pos) const {
  auto it = std::upper_bound(fold_start.begin(), fold_start.end(), static_cast<std::uint32_t>(fold_pos));
  return it == fold_start.begin() ? 0 : static_cast<std::size_t>(it - fold_start.begin()) - 1;
}

FoldedText casefold_mapped(std::string_view s) {
  FoldedText f;
  f.text.reserve(s.size());
  each_grapheme(s, [&](std::size_t start, std::size_t end) {
    f.fold_start.push_back(static_cast<std::uint32_t>(f.text.size()));
    f.orig_start.push_back(static_cast<std::uint32_t>(start));
    fold_into(s.substr(start, end - start), f.text);
    return true;
  });
  return f;
}

}  // namespace ctxfold
