-- ctxfold session database, schema version 4: the searchable text of nodes, packed for scanning.
-- Derived data like schema 002 (no append-only triggers; `ctxfold index --rebuild` clears and
-- rebuilds it): `import`, `append` and `index` write it, grep reads it instead of parsing every
-- node's JSON content (lib/recall/text_packs.hpp).

-- One row holds the searchable text (lib/recall/text_index.hpp searchable_text) of consecutive
-- nodes of one session, concatenated: a scan is a few large sequential reads and one substring
-- search per pack. Small columns first, so filtering by session or seq never reads the text.
CREATE TABLE text_pack (
  id        INTEGER PRIMARY KEY,
  session   TEXT NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq  INTEGER NOT NULL,
  nodes     INTEGER NOT NULL,   -- node count n
  seqs      BLOB NOT NULL,      -- n little-endian int64: nodes.seq, ascending
  ends      BLOB NOT NULL,      -- n little-endian uint32: end byte offset of each node's text in `text`
  flags     BLOB NOT NULL,      -- n bytes: 1 view node, 2 non-ASCII text, 4 a character folding to ASCII, 8 a CJK compatibility ideograph
  text      BLOB NOT NULL       -- the nodes' searchable text, back to back (UTF-8)
);
CREATE INDEX text_pack_session ON text_pack(session, first_seq);
CREATE INDEX text_pack_last ON text_pack(last_seq);

-- Every node with seq <= through_seq is in exactly one pack; format names the text layout (a
-- different one is not read, and the next writer repacks).
CREATE TABLE text_pack_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  through_seq INTEGER NOT NULL,
  format      TEXT NOT NULL
);
