-- ctxfold session database, schema version 11: an index of the system_prompt records, so the
-- render of every request finds a session's newest system prompt (Store::system_prompt) without
-- reading every event node of the session; a session of imported progress events has tens of
-- thousands. Partial: it holds only the records whose metadata.event is 'system_prompt', and
-- Store::system_prompt's query repeats that term so SQLite's planner takes it.
CREATE INDEX nodes_system_prompt ON nodes(session, kind, seq)
  WHERE json_extract(metadata, '$.event') = 'system_prompt';
