#pragma once
#include <span>
#include <string>
#include <string_view>

// How a render reads the view nodes a strategy wrote (docs/render.md "View policies"): one row
// per strategy name `render --strategy` takes. The strategies' registry (strategies/registry.hpp)
// points each compacting strategy at its row here; render itself knows no strategy.
namespace ctxfold {

/// What a render substitutes, and how, under one strategy's view.
struct ViewPolicy {
  std::string_view name;
  bool summary = false;       ///< the session's active rolling or imported summary stands in for what it covers
  bool lcm_prefix = false;    ///< ...the newest such summary none of lcm's own folds overlap (lcm's covered prefix)
  bool folds = false;         ///< lcm and region folds stand in for what they cover
  bool archives = false;      ///< snapcompact archives stand in as folds (read as text unless `frames`)
  bool frames = false;        ///< archives are drawn as image frames
  bool recap = false;         ///< rolling's recap follows a summary ctxfold wrote
  bool head_summary = false;  ///< render --head X: the first summary met on X's spine is in force there
  bool notes = false;         ///< the notes layer starts the request (when render asks for notes)
  std::string_view fold_section = "folds";  ///< the section the folds are reported under
  std::string_view text_fallback;           ///< the policy for a model that reads no images ("": none)
};

/// Every view policy, in the order help lists them: rolling, lcm, snapcompact, raw.
std::span<const ViewPolicy> view_policies();

/// The policy named `name`, or nullptr.
const ViewPolicy* find_view_policy(std::string_view name);

/// The policy named `name`; throws Error(usage,"render.strategy") naming the known ones.
const ViewPolicy& view_policy(std::string_view name);

/// The names joined for a message or help text: "rolling, lcm, snapcompact or raw" (with `last`
/// " or "), "rolling | lcm | snapcompact | raw" (with sep " | " and last " | ").
std::string view_policy_names(std::string_view sep = ", ", std::string_view last = " or ");

}  // namespace ctxfold
