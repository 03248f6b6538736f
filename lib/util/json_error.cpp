#include "util/json_error.hpp"

#include <algorithm>

namespace ctxfold {

JsonErrorAt json_error_at(std::string_view text, const nlohmann::json::parse_error& e) {
  JsonErrorAt at;
  const std::size_t end = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.col = 1;
    } else {
      ++at.col;
    }
  }
  at.what = e.what();
  if (auto p = at.what.find("syntax error"); p != std::string::npos) at.what = at.what.substr(p);
  return at;
}

}  // namespace ctxfold
