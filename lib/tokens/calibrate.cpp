#include "tokens/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tokens/estimate.hpp"

namespace ctxfold {
namespace {

std::optional<std::int64_t> int_field(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number_integer() || it->is_number_unsigned()) return it->get<std::int64_t>();
  if (it->is_number_float()) {
    double v = it->get<double>();
    if (std::isfinite(v) && v >= 0 && v < 1e15) return static_cast<std::int64_t>(v);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> measured_input_tokens(const Json& usage) {
  if (!usage.is_object()) return std::nullopt;
  std::optional<std::int64_t> total;
  if (usage.contains("cache_read_input_tokens") || usage.contains("cache_creation_input_tokens")) {
    auto in = int_field(usage, "input_tokens");
    auto cc = int_field(usage, "cache_creation_input_tokens");
    auto cr = int_field(usage, "cache_read_input_tokens");
    if (in || cc || cr) total = in.value_or(0) + cc.value_or(0) + cr.value_or(0);
    // litellm's Anthropic usage carries prompt_tokens next to the cache fields; it wins when present.
    if (auto pt = int_field(usage, "prompt_tokens")) total = pt;
  } else if (auto in = int_field(usage, "input_tokens")) {
    total = in;
  } else if (auto pt = int_field(usage, "prompt_tokens")) {
    total = pt;
  } else if (auto gi = int_field(usage, "input")) {
    total = gi;
  }
  if (!total || *total <= 0) return std::nullopt;
  return total;
}

Json Calibration::to_json() const {
  return Json{{"node", node},
              {"measured", measured},
              {"estimated", estimated},
              {"remainder", measured - estimated},
              {"origin", origin},
              {"estimator", estimator},
              {"hidden", hidden},
              {"hidden_per_edit", std::round(hidden_per_edit * 10.0) / 10.0},
              {"hidden_edits", hidden_edits}};
}

std::optional<Calibration> Calibration::from_json(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  Calibration c;
  c.node = json_str(j, "node");
  c.origin = json_str(j, "origin", "summary");
  c.estimator = json_str(j, "estimator");
  auto m = int_field(j, "measured");
  auto e = int_field(j, "estimated");
  if (c.node.empty() || !m || !e || *m <= 0 || *e < 0 || c.estimator != kEstimatorVersion) return std::nullopt;
  c.measured = *m;
  c.estimated = *e;
  // Calibrations recorded before the learned hidden term have none (0).
  c.hidden = std::max<std::int64_t>(0, int_field(j, "hidden").value_or(0));
  c.hidden_edits = std::max<std::int64_t>(0, int_field(j, "hidden_edits").value_or(0));
  if (auto it = j.find("hidden_per_edit"); it != j.end() && it->is_number()) {
    double v = it->get<double>();
    if (std::isfinite(v) && v > 0) c.hidden_per_edit = v;
  }
  return c;
}

std::optional<std::string> implausible_measurement(std::int64_t measured, std::int64_t estimated) {
  if (measured <= 0 || estimated < 0) return std::nullopt;  // measured_input_tokens already skips these
  if (measured * kCalibrationFactor < estimated)
    return fmt::format("the provider measured {} input tokens where the local estimate of that context is {}: under "
                       "1/{} of it, so the measurement is not of this context and is not used",
                       measured, estimated, kCalibrationFactor);
  return std::nullopt;
}

Json RefusedMeasurement::to_json() const {
  return Json{{"node", node}, {"measured", measured}, {"estimated", estimated}, {"factor", kCalibrationFactor},
              {"reason", reason}};
}

Json TokenFigure::to_json() const {
  Json j{{"value", value},
         {"kind", kind},
         {"estimated", estimated},
         {"calibration", calibration ? calibration->to_json() : Json(nullptr)}};
  if (refused) j["calibration_refused"] = refused->to_json();
  return j;
}

TokenFigure calibrated_figure(std::int64_t estimate, const std::optional<Calibration>& c) {
  TokenFigure f;
  f.estimated = estimate;
  f.value = estimate;
  if (!c) return f;
  if (auto why = implausible_measurement(c->measured, c->estimated)) {
    f.refused = RefusedMeasurement{c->node, c->measured, c->estimated, *why};
    return f;
  }
  f.calibration = c;
  f.kind = "calibrated";
  const std::int64_t remainder = c->measured - c->estimated;
  if (remainder >= 0 || c->estimated <= 0) {
    f.value = estimate + remainder;
  } else {
    f.value = static_cast<std::int64_t>(std::llround(static_cast<double>(estimate) * static_cast<double>(c->measured) /
                                                     static_cast<double>(c->estimated)));
  }
  f.value = std::max<std::int64_t>(0, f.value + std::max<std::int64_t>(0, c->hidden));
  return f;
}

}  // namespace ctxfold
