-- ctxfold session database, schema version 13: the few nodes that the lineage and the render of
-- a request look up by their metadata, listed in a table the store writes as it appends a node
-- (Store::append, Store::copy_node), in place of the partial indexes of schemas 011 and 012.
-- SQLite evaluated those indexes' terms (three instr scans and a JSON parse of the metadata) on
-- every inserted row: about a sixth of an import's CPU. Bits of `mark`: 1 the metadata text holds
-- requestSessionId, "duplicate_of" or "forked_from" (the lineage keys, docs/forensics.md
-- "Lineage"); 2 metadata.event is 'system_prompt' (Store::system_prompt). The readers repeat the
-- exact terms, so a row listed here for nothing changes no result.
CREATE TABLE node_marks (
  seq  INTEGER PRIMARY KEY,  -- nodes.seq
  mark INTEGER NOT NULL      -- 1 lineage key, 2 system_prompt record (bits)
);
INSERT INTO node_marks(seq, mark)
SELECT seq, m FROM (
  SELECT seq,
         (CASE WHEN instr(metadata, 'requestSessionId') > 0 OR instr(metadata, '"duplicate_of"') > 0
                 OR instr(metadata, '"forked_from"') > 0 THEN 1 ELSE 0 END)
       | (CASE WHEN json_extract(metadata, '$.event') = 'system_prompt' THEN 2 ELSE 0 END) AS m
  FROM nodes)
WHERE m <> 0;
DROP INDEX IF EXISTS nodes_system_prompt;
DROP INDEX IF EXISTS nodes_lineage_links;
