-- ctxfold session database, schema version 8: a side index of short non-ASCII grams for grep.
-- Derived data like schema 002 (no append-only triggers): `ctxfold index` fills it with the
-- trigram index and clears it with it (--rebuild, another fold version). The trigram index
-- (grep_fts) cannot answer a pattern shorter than three characters, such as a two-character CJK
-- word; this table can, for patterns of one or two characters that hold a non-ASCII one
-- (lib/recall/text_index.hpp).

-- For each gram of the case-folded searchable text (grep_fts's text): every single code point
-- >= U+0080, and every pair of adjacent code points of which at least one is >= U+0080, the
-- nodes whose folded text holds it. One row per gram and `ctxfold index` batch (chunk = the
-- batch's first seq), so a run appends rows and never rewrites old ones.
CREATE TABLE grep_gram (
  gram  TEXT NOT NULL,     -- the gram's UTF-8 bytes (one or two code points)
  chunk INTEGER NOT NULL,  -- first seq of the batch that wrote the row
  seqs  BLOB NOT NULL,     -- ascending nodes.seq, each the LEB128 varint of its distance to the previous one (the first to chunk - 1)
  PRIMARY KEY (gram, chunk)
) WITHOUT ROWID;

-- Every node with seq <= through_seq has its grams in grep_gram (never beyond
-- text_index_state.through_seq, whose fold_version they were folded under).
CREATE TABLE grep_gram_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  through_seq INTEGER NOT NULL
);
