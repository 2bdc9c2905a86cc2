-- Audit appends run inside the database, in one statement.
--
-- Until now the process read the tree's size and right edge under the append lock, hashed the
-- leaves and built the new nodes itself, and sent them back in a second round trip: the lock was
-- held across a network round trip and the wait for a busy event loop to get to the answer
-- (5-8 ms per report batch under load, measured), and every batch of reports and receipts in
-- the whole service waits on that lock. Here the lock is held only while Postgres does the work.
--
-- audit_append(heads, tails) appends one event per element: the event's leaf text is
-- heads[i] || its index || tails[i] (packages/db auditLeafTemplate: the canonical JSON of the
-- event with its index left open), its leaf hash SHA-256(0x00 || UTF-8 of that text), and each
-- tree node it completes SHA-256(0x01 || left || right) (RFC 6962, as packages/receipts
-- merkle.ts computes them; packages/db/test/audit.test.ts checks the two agree). The nodes are
-- computed in memory and stored in one statement: per-level statements cost ~1 ms per batch. Returns the
-- index of the first event. Takes the append lock (the same key as the process side,
-- 724310003), which is held to the end of the transaction.
CREATE FUNCTION audit_append(heads text[], tails text[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  n int := coalesce(array_length(heads, 1), 0);
  first bigint;
  -- edge[l + 1]: the tree's last complete node at level l when that level's count is odd — the
  -- only stored node an append pairs a new node with at that level
  edge bytea[];
  leaves text[];          -- the events' leaf texts, with their indexes
  level_hashes bytea[];   -- the new nodes of the current level, in index order
  lo bigint;              -- the index of level_hashes[1]
  lvl int := 0;
  parents bytea[];
  parent_lo bigint;
  parent_count int;
  left_hash bytea;
  node_levels smallint[];
  node_idx bigint[];
  node_hashes bytea[];
BEGIN
  IF n <> coalesce(array_length(tails, 1), 0) THEN
    RAISE EXCEPTION 'audit_append: % heads but % tails', n, coalesce(array_length(tails, 1), 0);
  END IF;
  PERFORM pg_advisory_xact_lock(724310003);
  -- after the lock: this statement's snapshot sees every append committed before it
  SELECT coalesce(max(idx) + 1, 0) INTO first FROM audit_tree_nodes WHERE level = 0;
  IF n = 0 THEN
    RETURN first;
  END IF;

  -- one lookup per level on the primary key (a join here was planned as a scan of the level)
  SELECT array_agg(CASE WHEN ((first >> l) & 1) = 1 THEN
           (SELECT t.hash FROM audit_tree_nodes t WHERE t.level = l AND t.idx = (first >> l) - 1)
         END ORDER BY l)
  INTO edge FROM generate_series(0, 62) AS l;

  -- unnest, not heads[i]: a subscript walks a text array from its start (quadratic per batch)
  SELECT array_agg(leaf ORDER BY ord), array_agg(sha256('\x00'::bytea || convert_to(leaf, 'UTF8')) ORDER BY ord)
  INTO leaves, level_hashes
  FROM unnest(heads, tails) WITH ORDINALITY AS u(head, tail, ord),
       LATERAL (SELECT head || (first + ord - 1)::text || tail AS leaf) AS made;

  INSERT INTO audit_events (idx, event_id, event_type, occurred_at, server_id, agent_id, key_id,
                            receipt_id, payload, leaf_hash)
  SELECT first + ord - 1, x.event_id, x.event_type, x.occurred_at, x.server_id, x.agent_id, x.key_id,
         x.receipt_id, x.payload, hash
  FROM unnest(leaves, level_hashes) WITH ORDINALITY AS u(leaf, hash, ord),
       json_to_record(leaf::json) AS x(event_id text, event_type text, occurred_at timestamptz,
         server_id bigint, agent_id text, key_id bigint, receipt_id text, payload jsonb);

  node_levels := array_fill(0::smallint, ARRAY[n]);
  node_idx := ARRAY(SELECT generate_series(first, first + n - 1));
  node_hashes := level_hashes;
  -- Up the tree: the parents whose right child is new are [lo/2, (lo + count)/2) at the next
  -- level; a parent whose left child is older than this append pairs with the edge node.
  lo := first;
  LOOP
    parent_lo := lo >> 1;
    parent_count := ((lo + array_length(level_hashes, 1)) >> 1) - parent_lo;
    EXIT WHEN parent_count = 0;
    parents := '{}';
    FOR j IN 0 .. parent_count - 1 LOOP
      IF 2 * (parent_lo + j) < lo THEN
        left_hash := edge[lvl + 1];
        IF left_hash IS NULL THEN
          RAISE EXCEPTION 'audit_append: a node below level % is missing from the tree', lvl + 1;
        END IF;
      ELSE
        left_hash := level_hashes[2 * (parent_lo + j) - lo + 1];
      END IF;
      parents := parents || sha256('\x01'::bytea || left_hash || level_hashes[2 * (parent_lo + j) - lo + 2]);
    END LOOP;
    node_levels := node_levels || array_fill((lvl + 1)::smallint, ARRAY[parent_count]);
    node_idx := node_idx || ARRAY(SELECT generate_series(parent_lo, parent_lo + parent_count - 1));
    node_hashes := node_hashes || parents;
    level_hashes := parents;
    lo := parent_lo;
    lvl := lvl + 1;
  END LOOP;

  INSERT INTO audit_tree_nodes (level, idx, hash)
  SELECT * FROM unnest(node_levels, node_idx, node_hashes);
  RETURN first;
END $$;
