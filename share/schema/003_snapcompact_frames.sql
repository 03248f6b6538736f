-- ctxfold session database, schema version 3: snapcompact's frame cache (docs/strategies.md
-- "snapcompact": frames are cached by geometry and content). Derived data like 002: a frame is a pure function of
-- its key (sha256 over the geometry and the frame's rows of archive text), so rows are only ever
-- added (compact --strategy snapcompact) and may be dropped without losing anything; renders read
-- them and draw what is missing. No append-only triggers.
CREATE TABLE snapcompact_frames (
  key      TEXT PRIMARY KEY,     -- sha256 hex of geometry key + the frame's rows
  geometry TEXT NOT NULL,        -- "8x13/134x82": advance x pitch / columns x rows
  width    INTEGER NOT NULL,     -- pixels
  height   INTEGER NOT NULL,     -- pixels
  chars    INTEGER NOT NULL,     -- grapheme clusters of archive text the frame shows
  missing  INTEGER NOT NULL,     -- characters drawn as the replacement glyph
  png      TEXT NOT NULL         -- the PNG, base64 (as a request carries it)
) WITHOUT ROWID;
