-- ctxfold session database, schema version 10: a positional index of the ASCII trigrams of each
-- node's case-folded searchable text, so grep -i answers an ASCII literal exactly without reading
-- text (lib/recall/tri_index.hpp). Derived data: `ctxfold index` fills it with grep_fts and
-- grep_gram, up to grep_tri_state.through_seq, and --rebuild clears it.

-- One row per trigram and run of consecutive nodes, cut before 900 bytes of postings. post, per
-- node: varint(seq delta << 1 | view), varint(byte length of the positions), then the varints of
-- the byte-offset deltas into the folded text (the first from 0); the row's first seq delta is
-- from 0. last is the row's last seq, so the row holding seq s is the first with last >= s.
CREATE TABLE grep_tri (
  tri   INTEGER NOT NULL,  -- the three bytes (< 0x80) as b0 << 14 | b1 << 7 | b2
  last  INTEGER NOT NULL,
  post  BLOB NOT NULL,
  PRIMARY KEY (tri, last)
) WITHOUT ROWID;

-- Postings per trigram over all rows: a query reads its rarest trigrams first.
CREATE TABLE grep_tri_count (
  tri      INTEGER PRIMARY KEY,
  postings INTEGER NOT NULL
);

-- Every node with seq <= through_seq has its trigrams in grep_tri.
CREATE TABLE grep_tri_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  through_seq INTEGER NOT NULL
);

-- The view nodes (summaries, archives, notes) among the indexed ones, read at once: grep splits an
-- index's hits over all sessions into raw and view nodes without a lookup per hit.
CREATE INDEX node_text_views ON node_text(seq) WHERE view = 1;
