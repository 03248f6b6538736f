-- ctxfold session database, schema version 7: where an incremental import resumes a source file
-- (issue 10 "appended lines are read from where the last run stopped").
--   resume_offset  byte offset just after the last newline read: the next run reads from here
--                  when the file only grew (the line there may have been read already if it had
--                  no newline yet; it is then deduplicated)
--   read_lines     physical lines before resume_offset (so line numbers continue)
--   tail_digest    sha256 of the (up to) 64 KiB before resume_offset: the cheap check that the
--                  file was not rewritten, instead of hashing the whole prefix again
-- Rows written before this version have an empty tail_digest: their file is compared by the full
-- prefix digest (digest over read_bytes), once. A row of a resumed read has an empty digest (the
-- prefix was not read again); its tail_digest is the check.
ALTER TABLE source_files ADD COLUMN resume_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE source_files ADD COLUMN read_lines INTEGER NOT NULL DEFAULT 0;
ALTER TABLE source_files ADD COLUMN tail_digest TEXT NOT NULL DEFAULT '';
