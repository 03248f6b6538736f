-- ctxfold session database, schema version 1.
-- Everything here is append-only: nodes, coverage lists, HEAD moves, log events and source
-- records are inserted and never updated or deleted; triggers make SQLite itself refuse it.

CREATE TABLE sessions (
  id             TEXT PRIMARY KEY,
  kind           TEXT NOT NULL,          -- main | sidechain | fork
  parent_session TEXT,                   -- sidechains and forks: the session they came from
  parent_node    TEXT,                   -- sidechains: the tool_use node (Task call) that launched it
  source         TEXT,                   -- file the session was imported from, or '-' / null
  format         TEXT,                   -- importer that produced it
  metadata       TEXT NOT NULL DEFAULT '{}',
  created_seq    INTEGER NOT NULL        -- node seq boundary when the session was created
);

CREATE TABLE nodes (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,  -- per-database append order
  id           TEXT NOT NULL UNIQUE,
  session      TEXT NOT NULL REFERENCES sessions(id),
  predecessor  TEXT REFERENCES nodes(id),
  kind         TEXT NOT NULL,          -- message | summary | archive | notes | event
  role         TEXT,                   -- system | user | assistant | tool (null for events)
  content      TEXT NOT NULL,          -- JSON array of provider-neutral blocks
  metadata     TEXT NOT NULL,          -- JSON object
  covers_first TEXT,                   -- view nodes: first covered id
  covers_last  TEXT,                   -- view nodes: last covered id
  covers_count INTEGER,                -- view nodes: number of covered ids (full list in covers)
  tokens       INTEGER NOT NULL,       -- local estimate of the node's rendered tokens
  digest       TEXT NOT NULL           -- sha256 of the canonical node (see store.hpp)
);
CREATE INDEX nodes_session_seq ON nodes(session, seq);
CREATE INDEX nodes_predecessor ON nodes(predecessor);
CREATE INDEX nodes_session_kind ON nodes(session, kind, seq);

-- The exact ordered ids a view node (summary) covers.
CREATE TABLE covers (
  summary_seq INTEGER NOT NULL REFERENCES nodes(seq),
  pos         INTEGER NOT NULL,
  node_id     TEXT NOT NULL,
  PRIMARY KEY (summary_seq, pos)
) WITHOUT ROWID;
CREATE INDEX covers_node ON covers(node_id);

-- Every HEAD move, with its cause. A session's HEAD is its newest row here.
CREATE TABLE head_moves (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  session      TEXT NOT NULL REFERENCES sessions(id),
  node_id      TEXT NOT NULL REFERENCES nodes(id),
  previous     TEXT,
  cause        TEXT NOT NULL,          -- import | append | checkout | rewind | fork
  boundary_seq INTEGER NOT NULL        -- max node seq when the move happened
);
CREATE INDEX head_moves_session ON head_moves(session, seq);

-- Log-only bookkeeping (compact/start, compact/summary, compact/end, ...).
CREATE TABLE events (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  session      TEXT NOT NULL,
  type         TEXT NOT NULL,
  ref          TEXT,                   -- e.g. the compaction id pairing start/end
  payload      TEXT NOT NULL DEFAULT '{}',
  boundary_seq INTEGER NOT NULL
);
CREATE INDEX events_session ON events(session, type, seq);

-- Source lines that are not conversation nodes (titles, snapshots, queue operations, unknown
-- types, unparseable fragments), kept verbatim so an import drops nothing.
CREATE TABLE source_records (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  session  TEXT NOT NULL,
  source   TEXT NOT NULL,
  line     INTEGER NOT NULL,
  type     TEXT NOT NULL,
  digest   TEXT NOT NULL,
  raw      TEXT NOT NULL,
  UNIQUE (session, line, digest)
);

CREATE TRIGGER sessions_no_update BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'sessions are append-only'); END;
CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions BEGIN SELECT RAISE(ABORT, 'sessions are append-only'); END;
CREATE TRIGGER nodes_no_update BEFORE UPDATE ON nodes BEGIN SELECT RAISE(ABORT, 'nodes are append-only'); END;
CREATE TRIGGER nodes_no_delete BEFORE DELETE ON nodes BEGIN SELECT RAISE(ABORT, 'nodes are append-only'); END;
CREATE TRIGGER covers_no_update BEFORE UPDATE ON covers BEGIN SELECT RAISE(ABORT, 'covers are append-only'); END;
CREATE TRIGGER covers_no_delete BEFORE DELETE ON covers BEGIN SELECT RAISE(ABORT, 'covers are append-only'); END;
CREATE TRIGGER head_moves_no_update BEFORE UPDATE ON head_moves BEGIN SELECT RAISE(ABORT, 'head moves are append-only'); END;
CREATE TRIGGER head_moves_no_delete BEFORE DELETE ON head_moves BEGIN SELECT RAISE(ABORT, 'head moves are append-only'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER source_records_no_update BEFORE UPDATE ON source_records BEGIN SELECT RAISE(ABORT, 'source records are append-only'); END;
CREATE TRIGGER source_records_no_delete BEFORE DELETE ON source_records BEGIN SELECT RAISE(ABORT, 'source records are append-only'); END;
