-- ctxfold session database on PostgreSQL, schema version 2 (docs/backends.md "Schema").
-- Two readings of SQLite's JSON functions that version 1 got wrong, for SQL written for both engines:
--   * a path that starts with an array index ('$[0].text', the first content block's text) is read
--     as SQLite reads it: version 1 dropped the '[' after '$' and looked up a key "0]". Paths of keys
--     ('$.a.b') and inner indexes ('$.a[1].b') read as before.
--   * json_type of a string is 'text', as SQLite names it (version 1 said 'string').
CREATE OR REPLACE FUNCTION ctxfold_json_path(path text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE WHEN path = '$' THEN '{}'::text[]
              ELSE string_to_array(ltrim(regexp_replace(substr(path, 2), '\[([0-9]+)\]', '.\1', 'g'), '.'), '.') END
$$;

CREATE OR REPLACE FUNCTION json_type(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE json_typeof(doc::json #> ctxfold_json_path(path))
           WHEN 'number' THEN CASE WHEN (doc::json #>> ctxfold_json_path(path)) ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
           WHEN 'boolean' THEN (doc::json #>> ctxfold_json_path(path))
           WHEN 'string' THEN 'text'
           ELSE json_typeof(doc::json #> ctxfold_json_path(path)) END
$$;
