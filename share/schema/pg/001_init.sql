-- ctxfold session database on PostgreSQL, schema version 1 (docs/backends.md "Schema").
-- The same ledger as the SQLite migrations share/schema/001..013 reach, in one step: the tables,
-- columns and meanings are theirs (read the comments there). What differs:
--   * seq columns are BIGSERIAL; write transactions take one advisory lock (lib/store/db.cpp Txn),
--     so seq grows in commit order as with SQLite's single writer.
--   * every text column compares byte-wise (COLLATE "C"), as SQLite's BINARY does, so ORDER BY
--     gives the same order on both engines.
--   * the schema version is the row of ctxfold_schema (SQLite: PRAGMA user_version).
--   * json_extract, json_type, json_each, json_valid and instr are defined below for the JSON paths ctxfold's SQL uses
--     ('$.a.b'), so one SQL text serves both engines.
--   * the append-only rule is enforced by triggers that refuse UPDATE, DELETE and TRUNCATE.
-- Derived tables not created here (the grep indexes, cover spans, snapcompact's frames) belong to
-- commands that are not yet available on this backend; their readers check the schema first.

CREATE TABLE ctxfold_schema (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);

CREATE TABLE sessions (
  rowid          BIGSERIAL UNIQUE,          -- SQLite's implicit rowid: insertion order
  id             TEXT COLLATE "C" PRIMARY KEY,
  kind           TEXT COLLATE "C" NOT NULL,
  parent_session TEXT COLLATE "C",
  parent_node    TEXT COLLATE "C",
  source         TEXT COLLATE "C",
  format         TEXT COLLATE "C",
  metadata       TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  created_seq    BIGINT NOT NULL
);

CREATE TABLE nodes (
  seq          BIGSERIAL PRIMARY KEY,
  id           TEXT COLLATE "C" NOT NULL UNIQUE,
  session      TEXT COLLATE "C" NOT NULL REFERENCES sessions(id),
  predecessor  TEXT COLLATE "C" REFERENCES nodes(id),
  kind         TEXT COLLATE "C" NOT NULL,
  role         TEXT COLLATE "C",
  content      TEXT COLLATE "C" NOT NULL,
  metadata     TEXT COLLATE "C" NOT NULL,
  covers_first TEXT COLLATE "C",
  covers_last  TEXT COLLATE "C",
  covers_count BIGINT,
  tokens       BIGINT NOT NULL,
  digest       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX nodes_session_seq ON nodes(session, seq);
CREATE INDEX nodes_predecessor ON nodes(predecessor);
CREATE INDEX nodes_session_kind ON nodes(session, kind, seq);

CREATE TABLE covers (
  summary_seq BIGINT NOT NULL REFERENCES nodes(seq),
  pos         BIGINT NOT NULL,
  node_id     TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (summary_seq, pos)
);
CREATE INDEX covers_node ON covers(node_id);

CREATE TABLE head_moves (
  seq          BIGSERIAL PRIMARY KEY,
  session      TEXT COLLATE "C" NOT NULL REFERENCES sessions(id),
  node_id      TEXT COLLATE "C" NOT NULL REFERENCES nodes(id),
  previous     TEXT COLLATE "C",
  cause        TEXT COLLATE "C" NOT NULL,
  boundary_seq BIGINT NOT NULL
);
CREATE INDEX head_moves_session ON head_moves(session, seq);

CREATE TABLE events (
  seq          BIGSERIAL PRIMARY KEY,
  session      TEXT COLLATE "C" NOT NULL,
  type         TEXT COLLATE "C" NOT NULL,
  ref          TEXT COLLATE "C",
  payload      TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  boundary_seq BIGINT NOT NULL
);
CREATE INDEX events_session ON events(session, type, seq);

CREATE TABLE source_records (
  seq      BIGSERIAL PRIMARY KEY,
  session  TEXT COLLATE "C" NOT NULL,
  source   TEXT COLLATE "C" NOT NULL,
  line     BIGINT NOT NULL,
  type     TEXT COLLATE "C" NOT NULL,
  digest   TEXT COLLATE "C" NOT NULL,
  raw      TEXT COLLATE "C" NOT NULL,
  UNIQUE (session, line, digest)
);

CREATE TABLE source_files (
  seq           BIGSERIAL PRIMARY KEY,
  path          TEXT COLLATE "C" NOT NULL,
  agent         TEXT COLLATE "C" NOT NULL,
  size          BIGINT NOT NULL,
  mtime_ns      BIGINT NOT NULL,
  read_bytes    BIGINT NOT NULL,
  digest        TEXT COLLATE "C" NOT NULL,
  outcome       TEXT COLLATE "C" NOT NULL,
  boundary_seq  BIGINT NOT NULL,
  resume_offset BIGINT NOT NULL DEFAULT 0,
  read_lines    BIGINT NOT NULL DEFAULT 0,
  tail_digest   TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX source_files_path ON source_files(path, seq);

CREATE TABLE node_marks (
  seq  BIGINT PRIMARY KEY,
  mark BIGINT NOT NULL
);

-- Derived data (no append-only triggers): the packed searchable text import writes.
CREATE TABLE text_pack (
  id        BIGSERIAL PRIMARY KEY,
  session   TEXT COLLATE "C" NOT NULL,
  first_seq BIGINT NOT NULL,
  last_seq  BIGINT NOT NULL,
  nodes     BIGINT NOT NULL,
  seqs      BYTEA NOT NULL,
  ends      BYTEA NOT NULL,
  flags     BYTEA NOT NULL,
  text      BYTEA NOT NULL
);
CREATE INDEX text_pack_session ON text_pack(session, first_seq);
CREATE INDEX text_pack_last ON text_pack(last_seq);

CREATE TABLE text_pack_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  through_seq BIGINT NOT NULL,
  format      TEXT COLLATE "C" NOT NULL
);

-- The append-only rule: the server refuses to change or remove a ledger row.
CREATE FUNCTION ctxfold_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% are append-only', TG_ARGV[0];
END $$;

CREATE TRIGGER sessions_no_change BEFORE UPDATE OR DELETE ON sessions
  FOR EACH ROW EXECUTE FUNCTION ctxfold_append_only('sessions');
CREATE TRIGGER sessions_no_truncate BEFORE TRUNCATE ON sessions
  FOR EACH STATEMENT EXECUTE FUNCTION ctxfold_append_only('sessions');
CREATE TRIGGER nodes_no_change BEFORE UPDATE OR DELETE ON nodes
  FOR EACH ROW EXECUTE FUNCTION ctxfold_append_only('nodes');
CREATE TRIGGER nodes_no_truncate BEFORE TRUNCATE ON nodes
  FOR EACH STATEMENT EXECUTE FUNCTION ctxfold_append_only('nodes');
CREATE TRIGGER covers_no_change BEFORE UPDATE OR DELETE ON covers
  FOR EACH ROW EXECUTE FUNCTION ctxfold_append_only('covers');
CREATE TRIGGER covers_no_truncate BEFORE TRUNCATE ON covers
  FOR EACH STATEMENT EXECUTE FUNCTION ctxfold_append_only('covers');
CREATE TRIGGER head_moves_no_change BEFORE UPDATE OR DELETE ON head_moves
  FOR EACH ROW EXECUTE FUNCTION ctxfold_append_only('head moves');
CREATE TRIGGER head_moves_no_truncate BEFORE TRUNCATE ON head_moves
  FOR EACH STATEMENT EXECUTE FUNCTION ctxfold_append_only('head moves');
CREATE TRIGGER events_no_change BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION ctxfold_append_only('events');
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION ctxfold_append_only('events');
CREATE TRIGGER source_records_no_change BEFORE UPDATE OR DELETE ON source_records
  FOR EACH ROW EXECUTE FUNCTION ctxfold_append_only('source records');
CREATE TRIGGER source_records_no_truncate BEFORE TRUNCATE ON source_records
  FOR EACH STATEMENT EXECUTE FUNCTION ctxfold_append_only('source records');
CREATE TRIGGER source_files_no_change BEFORE UPDATE OR DELETE ON source_files
  FOR EACH ROW EXECUTE FUNCTION ctxfold_append_only('source files');
CREATE TRIGGER source_files_no_truncate BEFORE TRUNCATE ON source_files
  FOR EACH STATEMENT EXECUTE FUNCTION ctxfold_append_only('source files');

-- SQLite's JSON path '$.a.b[2]' as a PostgreSQL path array {a,b,2}.
CREATE FUNCTION ctxfold_json_path(path text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE WHEN path = '$' THEN '{}'::text[]
              ELSE string_to_array(regexp_replace(substr(path, 3), '\[([0-9]+)\]', '.\1', 'g'), '.') END
$$;

-- A JSON value as SQLite's json_extract and json_each give it in SQL: a string without quotes,
-- true and false as 1 and 0, null as NULL, a number, object or array as its JSON text.
CREATE FUNCTION ctxfold_json_sql(v json) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE json_typeof(v) WHEN 'string' THEN v #>> '{}' WHEN 'null' THEN NULL
                             WHEN 'boolean' THEN CASE WHEN v::text = 'true' THEN '1' ELSE '0' END
                             ELSE v::text END
$$;

CREATE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT ctxfold_json_sql(doc::json #> ctxfold_json_path(path))
$$;

CREATE FUNCTION json_type(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE json_typeof(doc::json #> ctxfold_json_path(path))
           WHEN 'number' THEN CASE WHEN (doc::json #>> ctxfold_json_path(path)) ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
           WHEN 'boolean' THEN (doc::json #>> ctxfold_json_path(path))
           ELSE json_typeof(doc::json #> ctxfold_json_path(path)) END
$$;

-- json_each(doc, path): the elements of the array (key: the index) or the members of the object
-- (key: the name) at path, values as ctxfold_json_sql gives them; nothing for another value.
CREATE FUNCTION json_each(doc text, path text) RETURNS TABLE(key text, value text) LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT (e.ord - 1)::text, ctxfold_json_sql(e.v)
    FROM json_array_elements(CASE WHEN json_typeof(doc::json #> ctxfold_json_path(path)) = 'array'
                                  THEN doc::json #> ctxfold_json_path(path) ELSE '[]'::json END) WITH ORDINALITY e(v, ord)
  UNION ALL
  SELECT o.key, ctxfold_json_sql(o.value)
    FROM json_each(CASE WHEN json_typeof(doc::json #> ctxfold_json_path(path)) = 'object'
                        THEN doc::json #> ctxfold_json_path(path) ELSE '{}'::json END) o
$$;

CREATE FUNCTION instr(haystack text, needle text) RETURNS integer LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT strpos(haystack, needle)
$$;

CREATE FUNCTION json_valid(doc text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
  PERFORM doc::json;
  RETURN true;
EXCEPTION WHEN others THEN
  RETURN false;
END $$;
