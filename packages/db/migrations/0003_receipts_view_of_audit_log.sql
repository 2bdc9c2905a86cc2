-- Receipts were stored twice: a receipts row and the audit event written in the same
-- transaction, whose payload already holds the receipt's JWS, server URL, verdict and score
-- (and its receipt_id, issue time and log index are the event's own columns). The second copy
-- cost every /agent-query a heap row, two index entries and the JWS again in the WAL (about
-- 12 µs of database CPU per answer, measured with pgbench on 500-row batches). The audit log is
-- the authoritative record — it is the one the Merkle tree and the checkpoints cover — so
-- `receipts` becomes a view of it, with the same columns as the table it replaces.

-- Every receipt must already be in the log; refuse to drop a table holding one that is not.
DO $$
DECLARE missing bigint;
BEGIN
  SELECT count(*) INTO missing FROM receipts r
  WHERE NOT EXISTS (
    SELECT 1 FROM audit_events e WHERE e.receipt_id = r.id AND e.payload->>'jws' = r.jws);
  IF missing > 0 THEN
    RAISE EXCEPTION '% receipts have no matching audit event; not dropping the receipts table', missing;
  END IF;
END $$;

DROP TABLE receipts;

-- The kid is the one in the JWS's protected header: the key the receipt was really signed with.
CREATE FUNCTION jws_kid(jws text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN convert_from(
  decode(
    translate(split_part(jws, '.', 1), '-_', '+/')
      || repeat('=', (4 - length(split_part(jws, '.', 1)) % 4) % 4),
    'base64'),
  'UTF8')::jsonb ->> 'kid';

CREATE VIEW receipts AS
SELECT e.receipt_id                            AS id,
       e.payload ->> 'jws'                     AS jws,
       e.server_id,
       e.payload ->> 'server_url'              AS server_url,
       e.payload ->> 'verdict'                 AS verdict,
       (e.payload ->> 'score')::double precision AS score,
       e.occurred_at                           AS issued_at,
       jws_kid(e.payload ->> 'jws')            AS kid,
       e.idx                                   AS audit_index
FROM audit_events e
WHERE e.receipt_id IS NOT NULL;

-- During a rolling upgrade, processes of the previous release still insert a receipts row beside
-- each audit event, and their retention job deletes old ones. Both keep working: the row's data
-- is already in the audit event written in the same transaction, so the insert is accepted and
-- dropped, and deleting old receipts is what pruning their audit events does.
CREATE FUNCTION receipts_written_by_previous_release() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RETURN NULL;
END $$;

CREATE TRIGGER receipts_previous_release_writes
INSTEAD OF INSERT OR DELETE ON receipts
FOR EACH ROW EXECUTE FUNCTION receipts_written_by_previous_release();
