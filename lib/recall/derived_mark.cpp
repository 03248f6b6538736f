#include "recall/derived_mark.hpp"

#include <fmt/format.h>

namespace ctxfold {

std::optional<std::pair<std::int64_t, std::string>> read_derived_mark(Db& db, const DerivedMark& m) {
  auto q = db.prepare(fmt::format("SELECT through_seq, {} FROM {} WHERE id=1", m.version_column, m.state_table));
  if (!q.step()) return std::nullopt;
  return std::make_pair(q.int64(0), q.text(1));
}

std::int64_t start_derived_mark(Db& db, const DerivedMark& m, std::string_view version, bool rebuild, bool* rebuilt) {
  std::int64_t through = 0;
  if (auto stored = read_derived_mark(db, m)) {
    through = stored->first;
    if (stored->second != version) rebuild = true;
  }
  if (rebuild) {
    db.exec(fmt::format("DELETE FROM {}", m.data_table));
    through = 0;
    if (rebuilt) *rebuilt = true;
  }
  auto put = db.prepare(fmt::format(
      "INSERT INTO {0}(id, through_seq, {1}) VALUES (1, ?1, ?2) "
      "ON CONFLICT(id) DO UPDATE SET through_seq=excluded.through_seq, {1}=excluded.{1}",
      m.state_table, m.version_column));
  put.bind(1, through).bind(2, version);
  put.run();
  return through;
}

void advance_derived_mark(Db& db, const DerivedMark& m, std::int64_t through) {
  auto q = db.prepare(fmt::format("UPDATE {} SET through_seq=?1 WHERE id=1", m.state_table));
  q.bind(1, through);
  q.run();
}

}  // namespace ctxfold
