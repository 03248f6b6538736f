#include "render/view_policy.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace ctxfold {

namespace {

// clang-format off
constexpr ViewPolicy kPolicies[] = {
    // rolling: one active summary, then its recap and the tail; stored folds (lcm, regions,
    // snapcompact archives as text) where they fit.
    {.name = "rolling", .summary = true, .folds = true, .archives = true, .recap = true,
     .head_summary = true, .notes = true},
    // lcm: its fold tree over the prefix the active summary covers.
    {.name = "lcm", .summary = true, .lcm_prefix = true, .folds = true, .notes = true,
     .fold_section = "summary"},
    // snapcompact: rolling's walk, with its archives drawn as frames; rolling's view for a model
    // that reads no images.
    {.name = "snapcompact", .summary = true, .folds = true, .archives = true, .frames = true,
     .head_summary = true, .notes = true, .text_fallback = "rolling"},
    // raw: every stored message on HEAD's spine, nothing substituted.
    {.name = "raw"},
};
// clang-format on

}  // namespace

std::span<const ViewPolicy> view_policies() { return kPolicies; }

const ViewPolicy* find_view_policy(std::string_view name) {
  for (const auto& p : kPolicies)
    if (p.name == name) return &p;
  return nullptr;
}

const ViewPolicy& view_policy(std::string_view name) {
  if (const ViewPolicy* p = find_view_policy(name)) return *p;
  throw Error(Exit::usage, "render.strategy", fmt::format("render does not know strategy '{}'", name),
              "use " + view_policy_names());
}

std::string view_policy_names(std::string_view sep, std::string_view last) {
  std::string out;
  const std::size_t n = std::size(kPolicies);
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += i + 1 == n ? last : sep;
    out += kPolicies[i].name;
  }
  return out;
}

}  // namespace ctxfold
