-- Dirty marks become an append-only queue. With a primary key on (server_id, hour), a writer
-- inserting a mark that another open transaction had just inserted or taken waited for it, and
-- since those writers also lock servers rows, probe batches, report batches and the analyzer
-- deadlocked now and then (seen in the 30-minute soak: 1.7 % of reports refused). Without the
-- key an insert never waits; the analyzer dedupes what it takes.
ALTER TABLE rollup_dirty DROP CONSTRAINT rollup_dirty_pkey;
ALTER TABLE rollup_dirty ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
