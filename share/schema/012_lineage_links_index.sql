-- ctxfold session database, schema version 12: an index of the nodes whose metadata can link two
-- sessions (docs/forensics.md "Lineage"): a Claude Code record naming the session that made its
-- request (requestSessionId), a record stored again under another session (duplicate_of), a node
-- copied by `ctxfold fork` (forked_from). The lineage (grep --all-sessions, usage, compactions,
-- sessions) reads these few nodes instead of every node's metadata, which was a full pass over
-- the largest column of the file on every run. Partial: it holds only the nodes whose metadata
-- holds one of the three keys, and the lineage queries repeat those terms so SQLite's planner
-- takes it.
CREATE INDEX nodes_lineage_links ON nodes(seq)
  WHERE instr(metadata, 'requestSessionId') > 0 OR instr(metadata, '"duplicate_of"') > 0
     OR instr(metadata, '"forked_from"') > 0;
