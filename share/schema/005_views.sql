-- ctxfold session database, schema version 5: read-only SQL views for querying a database
-- directly (sqlite3, DuckDB's sqlite extension, Datasette). They derive everything from the
-- ledger tables and store nothing. Timestamps are the records' own (metadata.timestamp, ISO-8601).
-- The example queries below are run by tests/e2e/sql_views.sh: each "-- example:" line is one
-- query, run as written.
--
-- example: SELECT agent, count(*) AS sessions, sum(node_count) AS nodes FROM v_sessions GROUP BY agent ORDER BY agent;
-- example: SELECT id, parent_session, first_timestamp, last_timestamp FROM v_sessions WHERE kind = 'sidechain' ORDER BY first_timestamp LIMIT 5;
-- example: SELECT session, origin, trigger, pre_tokens, covers_count FROM v_summaries ORDER BY seq;
-- example: SELECT model, count(*) AS responses, sum(input_tokens) AS input, sum(output_tokens) AS output FROM v_usage GROUP BY model ORDER BY responses DESC;
-- example: SELECT substr(timestamp, 1, 10) AS day, count(*) AS nodes FROM v_nodes WHERE role = 'user' GROUP BY day ORDER BY day;
-- example: SELECT s.id, count(u.node) AS responses FROM v_sessions s LEFT JOIN v_usage u ON u.session = s.id WHERE s.kind = 'main' GROUP BY s.id ORDER BY responses DESC LIMIT 3;

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

-- One row per summary view node: imported compactions (origin 'import': Claude compact_boundary,
-- Codex compacted) and ctxfold's own (origin 'compact', strategy rolling | lcm), with the covered
-- range (the full ordered list is in covers).
CREATE VIEW v_summaries AS
SELECT n.seq, n.id, n.session, json_extract(n.metadata, '$.origin') AS origin,
       json_extract(n.metadata, '$.strategy') AS strategy, json_extract(n.metadata, '$.trigger') AS trigger,
       json_extract(n.metadata, '$.preTokens') AS pre_tokens, n.covers_first, n.covers_last, n.covers_count,
       n.tokens AS estimated_tokens, json_extract(n.metadata, '$.timestamp') AS timestamp
FROM nodes n WHERE n.kind = 'summary';

-- One row per model response with recorded usage, the provider's own fields as numbers (absent
-- ones null). A Claude response streamed over several nodes sharing metadata.message_id appears
-- once: its newest node (`ctxfold usage` normalizes the fields and prices them).
CREATE VIEW v_usage AS
SELECT session, agent, node, message_id, model, timestamp,
       input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cached_input_tokens, usage
FROM (
  SELECT n.session, coalesce(s.format, 'ctxfold') AS agent, n.id AS node,
         json_extract(n.metadata, '$.message_id') AS message_id, json_extract(n.metadata, '$.model') AS model,
         json_extract(n.metadata, '$.timestamp') AS timestamp,
         coalesce(json_extract(n.metadata, '$.usage.input_tokens'), json_extract(n.metadata, '$.usage.input')) AS input_tokens,
         coalesce(json_extract(n.metadata, '$.usage.output_tokens'), json_extract(n.metadata, '$.usage.output')) AS output_tokens,
         json_extract(n.metadata, '$.usage.cache_creation_input_tokens') AS cache_creation_input_tokens,
         coalesce(json_extract(n.metadata, '$.usage.cache_read_input_tokens'), json_extract(n.metadata, '$.usage.cached')) AS cache_read_input_tokens,
         json_extract(n.metadata, '$.usage.cached_input_tokens') AS cached_input_tokens,
         json_extract(n.metadata, '$.usage') AS usage,
         row_number() OVER (PARTITION BY n.session, coalesce(json_extract(n.metadata, '$.message_id'), n.id)
                            ORDER BY n.seq DESC) AS rn
  FROM nodes n JOIN sessions s ON s.id = n.session
  WHERE n.role = 'assistant' AND json_type(n.metadata, '$.usage') = 'object'
) WHERE rn = 1;
