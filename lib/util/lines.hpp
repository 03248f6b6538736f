#pragma once
#include <string_view>
#include <type_traits>

namespace ctxfold {

/// Calls fn(line) for each line of `text`, split at '\n' (the '\n' not part of the line; a CR
/// before it is kept): a last line without '\n' is a line, a text ending in '\n' has no empty
/// line after it, an empty text has none. fn returns void, or bool: false stops the walk.
template <class F>
void for_each_line(std::string_view text, F&& fn) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if constexpr (std::is_same_v<std::invoke_result_t<F&, std::string_view>, bool>) {
      if (!fn(line)) return;
    } else {
      fn(line);
    }
  }
}

}  // namespace ctxfold
