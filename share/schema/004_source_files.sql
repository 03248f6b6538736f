-- ctxfold session database, schema version 4: the source files an agent-home import has read.
-- One row per observation that changed something (append-only like the ledger): the newest row
-- of a path is what the next `ctxfold import --from ...` compares against. A file whose size and
-- modification time match its newest row is not opened again; one that grew is checked against
-- the digest of the bytes read before (equal: appended; else rewritten, re-read and
-- deduplicated by node id and digest). A source file that disappears changes nothing here or in
-- the ledger: the database is the archive.
CREATE TABLE source_files (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  path         TEXT NOT NULL,          -- absolute path of the source file
  agent        TEXT NOT NULL,          -- claude-code | codex | gemini | ignored (another format)
  size         INTEGER NOT NULL,       -- bytes, as stat reported before reading
  mtime_ns     INTEGER NOT NULL,       -- modification time, nanoseconds since the epoch
  read_bytes   INTEGER NOT NULL,       -- bytes covered by digest (the file's first read_bytes)
  digest       TEXT NOT NULL,          -- sha256 of those bytes, lowercase hex
  outcome      TEXT NOT NULL,          -- new | appended | rewritten | touched | ignored
  boundary_seq INTEGER NOT NULL        -- max node seq after the file was imported
);
CREATE INDEX source_files_path ON source_files(path, seq);
CREATE TRIGGER source_files_no_update BEFORE UPDATE ON source_files BEGIN SELECT RAISE(ABORT, 'source files are append-only'); END;
CREATE TRIGGER source_files_no_delete BEFORE DELETE ON source_files BEGIN SELECT RAISE(ABORT, 'source files are append-only'); END;
