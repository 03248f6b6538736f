#pragma once
// The session DAG as a picture (`log --graph --format dot`): Graphviz DOT text.
#include <string>

#include "store/store.hpp"

namespace ctxfold {

/// Counts behind one drawing, for tests and the command's stderr line.
struct GraphStats {
  std::int64_t raw_nodes = 0;  ///< raw nodes drawn
  std::int64_t capsules = 0;   ///< active summaries drawn as a capsule
  std::int64_t folded = 0;     ///< covered nodes folded into a capsule (not drawn on their own)
  std::int64_t relics = 0;     ///< superseded summaries and other inert view nodes, drawn dashed
  std::int64_t tips = 0;       ///< branch tips (non-event nodes without non-event children)
};

/// The DAG of `session` at append boundary as_of as a Graphviz digraph (`dot -Tsvg` draws it). The
/// active summary S is one capsule (a rounded, double-bordered box) standing at its splice point
/// and folding exactly covers_ids(S) on the branches whose render carries it (every covered id on
/// the tip's spine: docs/model.md "How a render uses a summary"); on a branch that does not carry
/// it (a fork from inside the covered range) the covered nodes that branch needs are drawn raw.
/// Superseded summaries and other strategies' folds are drawn as dashed relics beside their splice
/// point, folding nothing. HEAD is marked. Node labels: id, role and a short text preview,
/// DOT-escaped. Log-only events are not branches: a leaf event is left out, an event inside a chain
/// is drawn as a point.
std::string session_dot(Store& st, const std::string& session, std::int64_t as_of = kLatest,
                        GraphStats* stats = nullptr);

}  // namespace ctxfold
