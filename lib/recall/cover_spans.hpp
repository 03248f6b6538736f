#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "store/store.hpp"

namespace ctxfold {

/// Covers positions per block of cover_blocks (schema 009, share/schema/009_cover_spans.sql).
inline constexpr std::int64_t kCoverBlock = 1024;

/// What a view node's coverage resolves to (lib/recall/expand.hpp resolve_coverage): `rows`
/// original rows holding `graphemes` grapheme clusters of node_text (the "\n\n" separators an
/// expansion puts between rows not counted).
struct CoverSpan {
  std::int64_t rows = 0;
  std::int64_t graphemes = 0;
};

/// One block of a view node's covers: positions [block * kCoverBlock, (block + 1) * kCoverBlock).
struct CoverBlock {
  std::int64_t block = 0;
  CoverSpan span;
};

/// One covers entry of a view node, classified the way expansion resolves it: a child view node
/// (kind summary | archive | notes with covers, that no node names as its predecessor) is opened;
/// anything else, a view node the chain continues from (an imported summary written into the
/// transcript) included, is one original row.
struct CoveredEntry {
  std::string id;
  bool found = false;             ///< the node exists
  std::int64_t seq = 0;           ///< its seq when found
  bool child_view = false;        ///< opened recursively rather than listed as a row
  std::int64_t graphemes = -1;    ///< node_text.graphemes, -1 when not indexed (or not asked)
};

/// Steps through the covers of view node `view_seq` in covers.pos order, from position
/// `from_pos`. With `lengths`, each entry carries its node_text length.
class CoversCursor {
 public:
  CoversCursor(Store& st, std::int64_t view_seq, std::int64_t from_pos, bool lengths);
  /// The next entry, or false after the last.
  bool next(CoveredEntry& e);

 private:
  Store& st_;
  Stmt q_;
};

/// The stored span of view node `view_seq` when `ctxfold index` derived it completely (every
/// covered row indexed, no view met twice); nullopt otherwise, and on a database from before
/// schema 9. Read-only.
std::optional<CoverSpan> stored_cover_span(Store& st, std::int64_t view_seq);

/// The stored blocks of a view node with a complete span, in block order (blocks without a
/// covers row are absent). Read-only.
std::vector<CoverBlock> stored_cover_blocks(Store& st, std::int64_t view_seq);

/// The child view nodes a complete span opened (cover_children), by seq. Read-only.
std::vector<std::int64_t> stored_cover_children(Store& st, std::int64_t view_seq);

/// Whether the stored span of `view_seq` still resolves as expansion would now: no child view
/// node under it has since become a predecessor (nodes are append-only, so that is the one way a
/// derived span goes stale). Read-only.
bool cover_span_current(Store& st, std::int64_t view_seq);

struct CoverSpanReport {
  std::int64_t views = 0;       ///< view nodes derived by this run
  std::int64_t incomplete = 0;  ///< of which expand must walk row by row
  std::int64_t through_seq = 0; ///< every view node with seq <= this has its span
};

/// Part of `ctxfold index`: derives cover_spans/cover_blocks for every view node after the
/// stored through_seq up to the text index's through_seq (node_text must hold the rows' lengths),
/// in seq order, so a covered view node (an lcm parent's children) is derived before the view
/// covering it. `rebuild` (the text index was rebuilt) clears them first. A view node covering a
/// row without node_text, a missing node, a view node not yet derived or one met twice in its
/// coverage is stored incomplete: expand resolves it row by row as without an index. Requires a
/// writable store; one transaction.
CoverSpanReport update_cover_spans(Store& st, bool rebuild);

}  // namespace ctxfold
