#include "util/id_lines.hpp"

#include "util/json.hpp"

namespace ctxfold {

std::vector<std::string> ids_from_lines(std::istream& in) {
  std::vector<std::string> ids;
  for (IdLine& l : id_lines_from(in)) ids.push_back(std::move(l.id));
  return ids;
}

std::vector<IdLine> id_lines_from(std::istream& in) {
  std::vector<IdLine> ids;
  std::string line;
  std::int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    if (line.front() == '{') {
      Json j = Json::parse(line, nullptr, false);
      if (j.is_object()) {
        // JSON Lines envelopes ({"type":...,"data":{...}}) carry the record in "data".
        const Json& rec = j.contains("data") && j["data"].is_object() ? j["data"] : j;
        // A paged listing (ctxfold list's {"items":[{"id":...}]}) gives every item's id.
        if (auto items = rec.find("items"); items != rec.end() && items->is_array() && !rec.contains("id")) {
          for (const Json& item : *items)
            if (item.is_object() && item.contains("id") && item["id"].is_string() &&
                !item["id"].get_ref<const std::string&>().empty())
              ids.push_back({number, item["id"].get<std::string>()});
          continue;
        }
        for (const char* key : {"id", "node", "summary_id", "head"})
          if (auto it = rec.find(key); it != rec.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
            ids.push_back({number, it->get<std::string>()});
            break;
          }
        continue;
      }
    }
    ids.push_back({number, line});
  }
  return ids;
}

}  // namespace ctxfold
