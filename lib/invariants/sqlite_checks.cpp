// I11 SQLite integrity: integrity_check (or quick_check) and the foreign keys.
#include "invariants/checks.hpp"

#include <fmt/format.h>

namespace ctxfold::verify_detail {

// ---------------------------------------------------------------- I11

void check_sqlite(Store& store, Check& c, bool quick) {
  {
    const char* pragma = quick ? "quick_check" : "integrity_check";
    auto st = store.db().prepare(fmt::format("PRAGMA {}", pragma));
    while (st.step()) {
      std::string row = st.text(0);
      if (row != "ok") add(c, "", {}, fmt::format("sqlite {}: {}", pragma, row));
    }
  }
  // Foreign keys. PRAGMA foreign_key_check over the whole file reads every row of nodes again (a
  // full pass at 10^6 nodes, 3-4 s); nodes' two keys are checked through their indexes instead,
  // and every other table with PRAGMA foreign_key_check(table).
  std::vector<std::string> tables;
  {
    auto t = store.db().prepare(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name <> 'nodes' "
        "ORDER BY name");
    while (t.step()) tables.push_back(t.text(0));
  }
  for (const auto& table : tables) {
    auto st = store.db().prepare(fmt::format("PRAGMA foreign_key_check(\"{}\")", table));
    while (st.step())
      add(c, "", {},
          fmt::format("table '{}' row {} references a row of '{}' that does not exist (foreign key {})", st.text(0),
                      st.is_null(1) ? std::string("?") : std::to_string(st.int64(1)), st.text(2), st.int64(3)));
  }
  // nodes.session -> sessions(id) and nodes.predecessor -> nodes(id) (share/schema/001_init.sql),
  // each read through its index.
  struct NodeKey {
    const char* sql;
    const char* target;
    const char* key;
  };
  for (const NodeKey& k :
       {NodeKey{"SELECT n.seq FROM nodes n INDEXED BY nodes_session_seq "
                "WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = n.session)",
                "sessions", "session"},
        NodeKey{"SELECT p.seq FROM nodes p INDEXED BY nodes_predecessor WHERE p.predecessor IS NOT NULL "
                "AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = p.predecessor)",
                "nodes", "predecessor"}}) {
    auto st = store.db().prepare(k.sql);
    while (st.step())
      add(c, "", {},
          fmt::format("table 'nodes' row {} references a row of '{}' that does not exist (foreign key {})",
                      st.int64(0), k.target, k.key));
  }
}

}  // namespace ctxfold::verify_detail
