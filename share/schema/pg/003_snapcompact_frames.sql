-- ctxfold session database on PostgreSQL, schema version 3 (docs/backends.md "Schema"): snapcompact's
-- frame cache, the table SQLite files have had since their version 3 (docs/strategies.md
-- "snapcompact"). Derived data: a frame is a pure function of its key (sha256 over the geometry
-- and the frame's rows of archive text), so rows are only added (compact --strategy snapcompact,
-- INSERT ... ON CONFLICT DO NOTHING) and may be dropped without losing anything; renders read them
-- and draw what is missing. No append-only triggers.
CREATE TABLE snapcompact_frames (
  key      TEXT PRIMARY KEY,     -- sha256 hex of geometry key + the frame's rows
  geometry TEXT NOT NULL,        -- "8x13/134x82": advance x pitch / columns x rows
  width    BIGINT NOT NULL,      -- pixels
  height   BIGINT NOT NULL,      -- pixels
  chars    BIGINT NOT NULL,      -- grapheme clusters of archive text the frame shows
  missing  BIGINT NOT NULL,      -- characters drawn as the replacement glyph
  png      TEXT NOT NULL         -- the PNG, base64 (as a request carries it)
);
