// `config`: the effective settings per strategy and where each came from (the file, or the
// default). The file is found as load_config does: --config, CTXFOLD_CONFIG, the per-user default.
#include <fmt/format.h>

#include "context.hpp"
#include "strategies/lcm.hpp"
#include "strategies/notes.hpp"
#include "strategies/registry.hpp"
#include "strategies/rolling.hpp"
#include "strategies/snapcompact.hpp"
#include "util/config.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct ConfigCliOptions {
  std::optional<std::string> config;
};

// One setting: its effective value and "default" or the file it came from.
Json setting(const Json& value, const Json& section, const char* key, const ConfigSource& src) {
  bool from_file = section.is_object() && section.contains(key) && !section[key].is_null();
  return {{"value", value}, {"source", from_file ? Json(*src.path) : Json("default")}};
}

Json shared(const CompactionOptions& o, const Json& section, const ConfigSource& src) {
  return {{"contextWindowTokens", setting(o.window ? Json(*o.window) : Json(nullptr), section, "contextWindowTokens", src)},
          {"triggerPercent", setting(o.trigger_percent, section, "triggerPercent", src)},
          {"tailPercent", setting(o.tail_percent, section, "tailPercent", src)},
          // null: no cap for the extractive summarizer, the strategy's default for one that costs per call
          {"maxCalls", setting(o.max_calls ? Json(*o.max_calls) : Json(nullptr), section, "maxCalls", src)}};
}

int run_config(Context& ctx, const ConfigCliOptions& o) {
  ConfigSource src = load_config(o.config, *ctx.env);
  RollingOptions rolling;
  apply_rolling_config(src.value, rolling);
  LcmOptions lcm;
  apply_lcm_config(src.value, lcm);
  Json r_sec = src.value.contains("rolling") ? src.value["rolling"] : Json(nullptr);
  Json l_sec = src.value.contains("lcm") ? src.value["lcm"] : Json(nullptr);
  Json settings = Json::object();
  settings["rolling"] = shared(rolling, r_sec, src);
  Json l = shared(lcm, l_sec, src);
  l["fanout"] = setting(lcm.fanout, l_sec, "fanout", src);
  l["leafChunkTokens"] = setting(lcm.leaf_chunk_tokens, l_sec, "leafChunkTokens", src);
  settings["lcm"] = l;
  SnapcompactOptions snap;
  apply_snapcompact_config(src.value, snap);
  Json s_sec = src.value.contains("snapcompact") ? src.value["snapcompact"] : Json(nullptr);
  Json sc = shared(snap, s_sec, src);
  sc["archivePercent"] = setting(snap.archive_percent, s_sec, "archivePercent", src);
  sc["maxFrames"] = setting(snap.max_frames ? Json(*snap.max_frames) : Json(nullptr), s_sec, "maxFrames", src);
  settings["snapcompact"] = sc;
  NotesOptions notes;
  apply_notes_config(src.value, notes);
  Json n_sec = src.value.contains("notes") ? src.value["notes"] : Json(nullptr);
  settings["notes"] = {{"enabled", setting(notes.enabled, n_sec, "enabled", src)},
                       {"budgetTokens", setting(notes.budget_tokens, n_sec, "budgetTokens", src)}};
  // Sections this build does not read are shown as given, so a typo is visible.
  Json other = Json::object();
  for (auto& [k, v] : src.value.items())
    if (!find_strategy(k) && parse_label(k) != StrategyLabel::notes) other[k] = v;
  Json out = {{"schema", "ctxfold.config/1"},
              {"file", src.path ? Json(*src.path) : Json(nullptr)},
              {"origin", src.origin},
              {"settings", settings},
              {"other_sections", other}};
  if (!ctx.text) {
    emit(out);
    return 0;
  }
  std::string t = fmt::format("config file: {} ({})\n", src.path.value_or("none"), src.origin);
  for (auto& [sec, keys] : settings.items())
    for (auto& [k, v] : keys.items())
      t += fmt::format("{}.{} = {}  ({})\n", sec, k, v["value"].dump(), v["source"].get<std::string>());
  for (auto& [k, v] : other.items()) t += fmt::format("{} = {}  (not read by this build)\n", k, v.dump());
  emit_text(t);
  return 0;
}
}  // namespace

std::function<int(Context&)> setup_config(CLI::App& sub) {
  auto o = std::make_shared<ConfigCliOptions>();
  sub.add_option("--config", o->config, "JSON file (default: $CTXFOLD_CONFIG, then ~/.config/ctxfold/config.json)");
  return [o](Context& ctx) { return run_config(ctx, *o); };
}

}  // namespace ctxfold::cli
