#include "model/preview.hpp"

#include "util/utf8.hpp"

namespace ctxfold {

std::string node_preview(const Node& n, std::size_t max_bytes) {
  std::string t = node_text(n);
  for (char& c : t)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  std::size_t cut = utf8_safe_prefix(t, max_bytes);
  if (cut < t.size()) t = t.substr(0, cut) + "...";
  return t;
}

}  // namespace ctxfold
