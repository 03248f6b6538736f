#include "util/json.hpp"

namespace ctxfold {

std::string dump_json(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Json parse_json(std::string_view text) { return Json::parse(text.begin(), text.end()); }

std::string json_str(const Json& obj, const char* key, const std::string& fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

}  // namespace ctxfold
