-- ctxfold session database, schema version 2: derived text data for recall.
-- Unlike the ledger (001: sessions, nodes, covers, head moves, events, source records), these
-- tables hold data derived from nodes and nothing else: `ctxfold index` fills them, and may clear
-- and rebuild them (--rebuild), so they carry no append-only triggers. Read commands never write
-- them; they use what is there and compute the rest (lib/recall/text_index.hpp).

-- One row per indexed node: the size of its searchable text (node_text, ill-formed UTF-8
-- replaced), for `expand` to seek a grapheme offset without reading the rows before it, and the
-- session and view flag grep needs to count index hits without reading the node.
CREATE TABLE node_text (
  seq       INTEGER PRIMARY KEY,     -- nodes.seq
  session   TEXT NOT NULL,
  view      INTEGER NOT NULL,        -- 1 for summary | archive | notes, else 0
  graphemes INTEGER NOT NULL,        -- extended grapheme clusters (UAX #29, utf8proc)
  bytes     INTEGER NOT NULL         -- UTF-8 bytes
);

-- How far the derived data reaches: every node with seq <= through_seq has its node_text row,
-- and its case-folded text in the FTS5 table grep_fts when fts = 1. grep_fts (fts5, trigram
-- tokenizer) is created by `ctxfold index` only when this SQLite has FTS5 with the trigram
-- tokenizer, so a database stays readable by a SQLite without it. fold_version names the
-- utf8proc (Unicode) version the text was folded with: an index folded under another version is
-- not used (rebuild it).
CREATE TABLE text_index_state (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  through_seq  INTEGER NOT NULL,
  fold_version TEXT NOT NULL,
  fts          INTEGER NOT NULL
);
