-- ctxfold session database, schema version 9: derived grapheme spans of summary coverage.
-- Like node_text (002) these rows are derived from the ledger and nothing else: `ctxfold index`
-- fills them (lib/recall/cover_spans.hpp) and may clear and rebuild them. They let `expand` seek
-- a grapheme offset deep in a long covered range by skipping whole blocks of covered rows,
-- instead of adding up the length of every row before the page.

-- One row per view node (summary | archive | notes) the index has reached: the original rows its
-- coverage resolves to (recursively through covered view nodes) and their total graphemes
-- (node_text.graphemes, separators not included). complete = 0 when a covered row is missing or
-- has no node_text row, or the coverage nests in a way expand resolves differently (a view met
-- twice): expand then walks that coverage row by row, as without an index.
CREATE TABLE cover_spans (
  summary_seq INTEGER PRIMARY KEY,   -- nodes.seq of the view node
  rows        INTEGER NOT NULL,
  graphemes   INTEGER NOT NULL,
  complete    INTEGER NOT NULL
);

-- The same totals per block of 1024 consecutive covers positions (block b holds covers.pos in
-- [1024*b, 1024*b + 1023]); a covered view node contributes its whole span. Only for complete
-- spans.
CREATE TABLE cover_blocks (
  summary_seq INTEGER NOT NULL,
  block       INTEGER NOT NULL,
  rows        INTEGER NOT NULL,
  graphemes   INTEGER NOT NULL,
  PRIMARY KEY (summary_seq, block)
) WITHOUT ROWID;

-- The covered view nodes opened by a complete span (an lcm parent's children). A view node that
-- later became a predecessor (the chain continues from it) is a row, not a child, from then on:
-- expand checks these before it trusts the span.
CREATE TABLE cover_children (
  summary_seq INTEGER NOT NULL,
  child_seq   INTEGER NOT NULL,
  PRIMARY KEY (summary_seq, child_seq)
) WITHOUT ROWID;

-- Every view node with seq <= through_seq has its cover_spans row.
CREATE TABLE cover_spans_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  through_seq INTEGER NOT NULL
);
