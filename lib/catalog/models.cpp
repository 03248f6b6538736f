#include "catalog/models.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.hpp"
#include "util/json.hpp"

namespace ctxfold {

std::string_view embedded_model_catalog();  // generated at build time (cmake/snapcompact_assets.cmake)

namespace {

const Json& catalog() {
  static const Json c = [] {
    try {
      return parse_json(std::string(embedded_model_catalog()));
    } catch (const std::exception& e) {
      throw Error(Exit::internal, "catalog.invalid", fmt::format("share/models/catalog.json: {}", e.what()));
    }
  }();
  return c;
}

int int_or(const Json& obj, const char* key, int fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

std::optional<std::int64_t> int64_of(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

bool names(const Json& e, const std::string& id) {
  if (json_str(e, "id") == id) return true;
  auto it = e.find("aliases");
  if (it == e.end() || !it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [&](const Json& a) { return a.is_string() && a.get<std::string>() == id; });
}

const Json* find_entry(const Json& models, const std::string& id) {
  for (const auto& e : models)
    if (names(e, id)) return &e;
  return nullptr;
}

}  // namespace

ModelInfo lookup_model(const std::string& id) {
  const Json& c = catalog();
  ModelInfo m;
  m.id = id;
  const Json defaults = c.value("defaults", Json::object());
  m.reads_images = defaults.value("reads_images", true);
  const Json dimg = defaults.value("image", Json::object());
  m.max_edge = int_or(dimg, "max_edge", m.max_edge);
  m.max_pixels = int_or(dimg, "max_pixels", 0);
  const Json dframe = defaults.value("frame", Json::object());
  m.frame_width = int_or(dframe, "width", m.frame_width);
  m.frame_rows = int_or(dframe, "rows", m.frame_rows);
  const Json& models = c.value("models", Json::array());
  const Json* e = id.empty() ? nullptr : find_entry(models, id);
  // A dated snapshot id ("claude-haiku-4-5-20251001", as transcripts record it) takes its
  // alias's entry ("claude-haiku-4-5") when no entry names it.
  if (!e && id.size() > 9 && id[id.size() - 9] == '-' &&
      std::all_of(id.end() - 8, id.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    e = find_entry(models, id.substr(0, id.size() - 9));
  if (!e) return m;
  m.known = true;
  m.entry = json_str(*e, "id");
  m.provider = json_str(*e, "provider");
  m.source = json_str(*e, "source");
  if (auto it = e->find("reads_images"); it != e->end() && it->is_boolean()) m.reads_images = it->get<bool>();
  m.context_window = int64_of(*e, "context_window");
  m.max_context_window = int64_of(*e, "max_context_window");
  m.max_output_tokens = int64_of(*e, "max_output_tokens");
  if (auto it = e->find("image"); it != e->end() && it->is_object()) {
    m.image_limits_declared = true;
    m.max_edge = int_or(*it, "max_edge", m.max_edge);
    m.short_edge = int_or(*it, "short_edge", 0);
    m.max_pixels = int_or(*it, "max_pixels", 0);
    m.max_images = int_or(*it, "max_images", 0);
  }
  return m;
}

std::string catalog_as_of() {
  static const char* const kNames[][2] = {
      {"claude-code", "Claude Code"}, {"codex", "Codex CLI"}, {"gemini-cli", "Gemini CLI"}};
  const Json clients = catalog().value("clients", Json::object());
  std::string out;
  for (const auto& [key, name] : kNames) {
    const std::string v = json_str(clients, key);
    if (v.empty()) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", name, v);
  }
  return out;
}

std::string unknown_model_note(const ModelInfo& m) {
  if (m.known) return {};
  if (m.id.empty()) return "no model recorded: the window is unknown";
  return fmt::format("model '{}' is not in ctxfold's model catalog (as of {}; a newer model needs a newer "
                     "catalog): its window is unknown",
                     m.id, catalog_as_of());
}

}  // namespace ctxfold
