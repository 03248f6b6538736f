-- ctxfold session database on PostgreSQL, schema version 5 (docs/backends.md "Schema"): the read-only
-- SQL views a SQLite file has had since its schema 5 (share/schema/005_views.sql), with the same
-- names, columns and rows, for querying a team's archive directly (psql, a dashboard). They derive
-- everything from the ledger tables and store nothing. Two differences follow from the engine:
-- json_extract gives text here (SQLite's is typed), so the token counts are cast to bigint (a
-- value that is not an integer gives NULL); and a subquery in FROM needs a name.
-- The example queries of share/schema/005_views.sql run here as written (tests/e2e/sql_views.sh
-- runs them on both engines).

-- ctxfold_int(text): the integer a json_extract value holds, NULL for anything else.
CREATE FUNCTION ctxfold_int(v text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE WHEN v ~ '^-?[0-9]{1,18}$' THEN v::bigint END
$$;

-- One row per session: kind (main | sidechain | fork), the parent it came from, the importer
-- (agent), the file it was imported from, node count and first/last record timestamp.
CREATE VIEW v_sessions AS
SELECT s.id, s.kind, s.parent_session, s.parent_node, coalesce(s.format, 'ctxfold') AS agent, s.source,
       (SELECT count(*) FROM nodes n WHERE n.session = s.id) AS node_count,
       (SELECT min(json_extract(n.metadata, '$.timestamp')) FROM nodes n WHERE n.session = s.id) AS first_timestamp,
       (SELECT max(json_extract(n.metadata, '$.timestamp')) FROM nodes n WHERE n.session = s.id) AS last_timestamp,
       s.metadata
FROM sessions s;

-- One row per node with the fields people filter on; content and metadata stay JSON text.
CREATE VIEW v_nodes AS
SELECT n.seq, n.id, n.session, n.predecessor, n.kind, n.role,
       json_extract(n.metadata, '$.timestamp') AS timestamp,
       json_extract(n.metadata, '$.model') AS model,
       n.tokens AS estimated_tokens, n.content, n.metadata
FROM nodes n;

-- One row per summary view node, imported and ctxfold's own, with the covered range (the full
-- ordered list is in covers).
CREATE VIEW v_summaries AS
SELECT n.seq, n.id, n.session, json_extract(n.metadata, '$.origin') AS origin,
       json_extract(n.metadata, '$.strategy') AS strategy, json_extract(n.metadata, '$.trigger') AS trigger,
       ctxfold_int(json_extract(n.metadata, '$.preTokens')) AS pre_tokens, n.covers_first, n.covers_last, n.covers_count,
       n.tokens AS estimated_tokens, json_extract(n.metadata, '$.timestamp') AS timestamp
FROM nodes n WHERE n.kind = 'summary';

-- One row per model response with recorded usage, the provider's own fields as numbers (absent
-- ones null); a response streamed over several nodes sharing metadata.message_id appears once:
-- its newest node.
CREATE VIEW v_usage AS
SELECT session, agent, node, message_id, model, timestamp,
       input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cached_input_tokens, usage
FROM (
  SELECT n.session, coalesce(s.format, 'ctxfold') AS agent, n.id AS node,
         json_extract(n.metadata, '$.message_id') AS message_id, json_extract(n.metadata, '$.model') AS model,
         json_extract(n.metadata, '$.timestamp') AS timestamp,
         ctxfold_int(coalesce(json_extract(n.metadata, '$.usage.input_tokens'), json_extract(n.metadata, '$.usage.input'))) AS input_tokens,
         ctxfold_int(coalesce(json_extract(n.metadata, '$.usage.output_tokens'), json_extract(n.metadata, '$.usage.output'))) AS output_tokens,
         ctxfold_int(json_extract(n.metadata, '$.usage.cache_creation_input_tokens')) AS cache_creation_input_tokens,
         ctxfold_int(coalesce(json_extract(n.metadata, '$.usage.cache_read_input_tokens'), json_extract(n.metadata, '$.usage.cached'))) AS cache_read_input_tokens,
         ctxfold_int(json_extract(n.metadata, '$.usage.cached_input_tokens')) AS cached_input_tokens,
         json_extract(n.metadata, '$.usage') AS usage,
         row_number() OVER (PARTITION BY n.session, coalesce(json_extract(n.metadata, '$.message_id'), n.id)
                            ORDER BY n.seq DESC) AS rn
  FROM nodes n JOIN sessions s ON s.id = n.session
  WHERE n.role = 'assistant' AND json_type(n.metadata, '$.usage') = 'object'
) AS responses WHERE rn = 1;
