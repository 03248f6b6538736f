#pragma once
#include <iterator>
#include <string>
#include <string_view>

// Tables of named rows (view policies, strategies): look a row up by its `name`, and list the
// names for a message or a help text.
namespace ctxfold {

/// The row of `rows` whose `name` equals `name`, or nullptr.
template <class Rows>
auto find_named(const Rows& rows, std::string_view name) -> decltype(&*std::begin(rows)) {
  for (const auto& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

/// The rows' names joined: "a, b or c" with sep ", " and last " or "; "a | b | c" with both " | ".
template <class Rows>
std::string join_names(const Rows& rows, std::string_view sep, std::string_view last) {
  std::string out;
  const std::size_t n = std::size(rows);
  std::size_t i = 0;
  for (const auto& r : rows) {
    if (i) out += i + 1 == n ? last : sep;
    out += r.name;
    ++i;
  }
  return out;
}

}  // namespace ctxfold
