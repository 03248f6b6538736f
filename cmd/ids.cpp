#include <iostream>
#include <string>

#include "context.hpp"

namespace ctxfold::cli {

std::vector<std::string> ids_from_arg(const std::string& arg) {
  if (arg != "-") return {arg};
  std::vector<std::string> ids;
  std::string line;
  while (std::getline(std::cin, line)) {
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
            if (item.is_object() && item.contains("id") && item["id"].is_string())
              ids.push_back(item["id"].get<std::string>());
          continue;
        }
        for (const char* key : {"id", "node", "summary_id", "head"})
          if (auto it = rec.find(key); it != rec.end() && it->is_string()) {
            ids.push_back(it->get<std::string>());
            break;
          }
        continue;
      }
    }
    ids.push_back(line);
  }
  return ids;
}

}  // namespace ctxfold::cli
