#pragma once

namespace ctxfold {

/// The view-node kinds (kind::is_view in lib/model/node.hpp: summary, archive, notes) as an SQL
/// list, for `kind IN kViewKindsSql` in queries. Kept apart from node.hpp and store.hpp so that
/// using it does not rebuild everything that includes them; must name the same kinds as is_view.
inline constexpr const char* kViewKindsSql = "('summary','archive','notes')";

}  // namespace ctxfold
