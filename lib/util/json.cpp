#include "util/json.hpp"

namespace ctxfold {

std::string dump_json(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Json parse_json(std::string_view text) { return Json::parse(text.begin(), text.end()); }

namespace {
/// The code unit of the `\uXXXX` escape at s[i] (s[i] == '\\'), or -1 when none is there.
long escape_unit(std::string_view s, std::size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  long v = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    const char c = s[k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}
}  // namespace

std::size_t replace_lone_surrogate_escapes(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size());
  std::size_t replaced = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out.push_back(text[i++]);
      continue;
    }
    const long u = escape_unit(text, i);
    if (u < 0xD800 || u > 0xDFFF) {  // not a surrogate escape (or no \u escape at all): copy it whole
      const std::size_t n = u < 0 ? 2 : 6;
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    if (u <= 0xDBFF) {
      const long low = escape_unit(text, i + 6);
      if (low >= 0xDC00 && low <= 0xDFFF) {  // a valid pair
        out.append(text.substr(i, 12));
        i += 12;
        continue;
      }
    }
    out.append("\\uFFFD");
    ++replaced;
    i += 6;
  }
  return replaced;
}

std::string json_str(const Json& obj, const char* key, const std::string& fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

}  // namespace ctxfold
