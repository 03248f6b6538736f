#include "store/recorded_model.hpp"

namespace ctxfold {

std::optional<std::string> recorded_model(Store& store, const std::string& session) {
  {
    auto& q = store.db().cached(
        "SELECT m FROM (SELECT json_extract(metadata,'$.model') AS m FROM nodes WHERE session=?1 AND role='assistant' "
        "ORDER BY seq DESC LIMIT 4096) AS t WHERE m IS NOT NULL AND m<>'' AND m NOT LIKE '<%' LIMIT 1");
    ResetOnExit r(q);
    q.bind(1, session);
    if (q.step() && !q.is_null(0)) return q.text(0);
  }
  auto& q = store.db().cached(
      // The alias is filtered in an outer query: PostgreSQL does not know a column alias in WHERE
      // (docs/backends.md "Writing SQL for both engines"); CASE keeps json_extract off invalid rows.
      "SELECT m FROM (SELECT CASE WHEN json_valid(raw) THEN json_extract(raw,'$.payload.model') END AS m, seq "
      "FROM source_records WHERE session=?1 AND type='turn_context') AS t WHERE m IS NOT NULL ORDER BY seq DESC LIMIT 1");
  ResetOnExit r(q);
  q.bind(1, session);
  if (q.step() && !q.is_null(0)) return q.text(0);
  return std::nullopt;
}

}  // namespace ctxfold
