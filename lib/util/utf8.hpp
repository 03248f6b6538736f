#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace ctxfold {

/// True when bytes are well-formed UTF-8 (no overlongs, no surrogates, max U+10FFFF).
bool utf8_valid(std::string_view bytes);

/// Copies bytes, replacing every ill-formed sequence with U+FFFD. Returns how many were replaced
/// through *replaced when given.
std::string utf8_sanitize(std::string_view bytes, std::size_t* replaced = nullptr);

/// A copy of s with the ASCII letters A-Z lowered; every other byte (UTF-8 included) as it was.
std::string ascii_lower(std::string_view s);

/// The largest prefix length <= max_bytes that does not cut a UTF-8 sequence.
std::size_t utf8_safe_prefix(std::string_view bytes, std::size_t max_bytes);

}  // namespace ctxfold
