// I6 HEAD integrity: the session's HEAD moves.
#include "invariants/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace ctxfold::verify_detail {
namespace {

// ---------------------------------------------------------------- I6

bool allowed_cause(const std::string& cause) {
  return cause == "import" || cause == "append" || cause == "checkout" || cause == "rewind" || cause == "fork";
}

}  // namespace

void check_head(Store& store, const std::string& session, Check& c) {
  std::int64_t max_seq = store.max_seq();
  auto moves = store.head_moves(session);
  std::int64_t last_boundary = 0;
  for (std::size_t k = 0; k < moves.size(); ++k) {
    const HeadMove& m = moves[k];
    if (!allowed_cause(m.cause))
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} to '{}' has cause '{}': only import, append, checkout, rewind and fork may move "
                      "HEAD (never a compaction, a load or a read)",
                      m.seq, m.node_id, m.cause));
    auto n = store.node(m.node_id, false);
    if (!n) {
      add(c, session, {m.node_id}, fmt::format("HEAD move #{} points at node '{}', which does not exist", m.seq, m.node_id));
    } else {
      if (n->session != session)
        add(c, session, {m.node_id},
            fmt::format("HEAD move #{} points at node '{}' of another session '{}'", m.seq, m.node_id, n->session));
      if (n->seq > m.boundary_seq)
        add(c, session, {m.node_id},
            fmt::format("HEAD move #{} points at node '{}' (seq {}) that was appended after the move (boundary {})",
                        m.seq, m.node_id, n->seq, m.boundary_seq));
    }
    if (m.boundary_seq > max_seq)
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} records boundary seq {} beyond the database's last seq {}", m.seq, m.boundary_seq,
                      max_seq));
    if (m.boundary_seq < last_boundary)
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} records boundary seq {}, older than the previous move's {}", m.seq, m.boundary_seq,
                      last_boundary));
    last_boundary = std::max(last_boundary, m.boundary_seq);
    if (k > 0 && m.previous != std::optional<std::string>(moves[k - 1].node_id))
      add(c, session, {m.node_id},
          fmt::format("HEAD move #{} says HEAD was '{}' but the previous move had set it to '{}': a HEAD move is missing",
                      m.seq, m.previous.value_or("(none)"), moves[k - 1].node_id));
  }
  if (moves.empty()) {
    std::int64_t count = store.node_count(session);
    if (count > 0)
      add(c, session, {}, fmt::format("session '{}' has {} nodes but no HEAD", session, count));
  }
}

}  // namespace ctxfold::verify_detail
