#include "render/view_policy.hpp"

#include <fmt/format.h>

#include "model/strategy_label.hpp"
#include "util/error.hpp"
#include "util/names.hpp"

namespace ctxfold {

namespace {

// clang-format off
// Every field is given in every row (designated, in declaration order): name, summary,
// lcm_prefix, folds, archives, frames, recap, head_summary, notes, fold_section, text_fallback.
constexpr ViewPolicy kPolicies[] = {
    // rolling: one active summary, then its recap and the tail; stored folds (lcm, regions,
    // snapcompact archives as text) where they fit.
    {.name = label_name(StrategyLabel::rolling),
     .summary = true, .lcm_prefix = false, .folds = true, .archives = true, .frames = false,
     .recap = true, .head_summary = true, .notes = true,
     .fold_section = "folds", .text_fallback = ""},
    // lcm: its fold tree over the prefix the active summary covers.
    {.name = label_name(StrategyLabel::lcm),
     .summary = true, .lcm_prefix = true, .folds = true, .archives = false, .frames = false,
     .recap = false, .head_summary = false, .notes = true,
     .fold_section = "summary", .text_fallback = ""},
    // snapcompact: rolling's walk, with its archives drawn as frames; rolling's view for a model
    // that reads no images.
    {.name = label_name(StrategyLabel::snapcompact),
     .summary = true, .lcm_prefix = false, .folds = true, .archives = true, .frames = true,
     .recap = false, .head_summary = true, .notes = true,
     .fold_section = "folds", .text_fallback = label_name(StrategyLabel::rolling)},
    // raw: every stored message on HEAD's spine, nothing substituted.
    {.name = "raw",
     .summary = false, .lcm_prefix = false, .folds = false, .archives = false, .frames = false,
     .recap = false, .head_summary = false, .notes = false,
     .fold_section = "folds", .text_fallback = ""},
};
// clang-format on

}  // namespace

std::span<const ViewPolicy> view_policies() { return kPolicies; }

const ViewPolicy* find_view_policy(std::string_view name) { return find_named(kPolicies, name); }

const ViewPolicy& view_policy(std::string_view name) {
  if (const ViewPolicy* p = find_view_policy(name)) return *p;
  throw Error(Exit::usage, "render.strategy", fmt::format("render does not know strategy '{}'", name),
              "use " + view_policy_names());
}

std::string view_policy_names(std::string_view sep, std::string_view last) { return join_names(kPolicies, sep, last); }

}  // namespace ctxfold
