-- The whole schema of ARCHITECTURE.md "Data". Forward-only: later changes are new files.
-- Runs identically on PGlite (embedded) and on a real Postgres.

-- Facts about this data store, e.g. data_since (the day it was created).
CREATE TABLE meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);
INSERT INTO meta (key, value) VALUES ('data_since', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD'));
-- A per-deployment secret mixed into hashes of client addresses (kept, never shown).
INSERT INTO meta (key, value) VALUES ('address_pepper', md5(random()::text || clock_timestamp()::text) || md5(random()::text));

CREATE TABLE servers (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url                   text NOT NULL UNIQUE,          -- normalized (see probe.normalizeServerUrl)
  slug                  text NOT NULL UNIQUE,
  name                  text NOT NULL,
  description           text,
  category              text NOT NULL DEFAULT 'other',
  github_url            text,
  source                text NOT NULL CHECK (source IN ('registered', 'reported', 'imported')),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  -- probe state, owned by the scheduler and the probe result writer
  next_probe_at         timestamptz NOT NULL DEFAULT now(),
  consecutive_failures  integer NOT NULL DEFAULT 0,
  last_outcome          text,
  last_probe_at         timestamptz,
  last_up_at            timestamptz,
  last_error            text,
  last_error_at         timestamptz,
  last_latency_ms       double precision,
  protocol_version      text,
  server_info           jsonb,
  tools_hash            text,
  tools                 jsonb,
  -- what the analyzer last derived (see packages/service analysis): the windowed inputs of the
  -- trust formula, evaluated at query time with the current clock and probe state
  trust_inputs          jsonb,
  trust_score           double precision,
  trust_verdict         text,
  stats                 jsonb,
  analyzed_at           timestamptz,
  -- the server's own latency/availability baseline over its hourly history, refreshed hourly
  self_baseline         jsonb,
  self_baseline_at      timestamptz
);
CREATE INDEX servers_next_probe_at_idx ON servers (next_probe_at);
CREATE INDEX servers_category_idx ON servers (category);

-- One row per probe. Partitioned by the slot the probe was scheduled for, so that old days can
-- be dropped whole (retention) and so the idempotency key (probe_id, scheduled_at) is
-- deterministic: a retried job writes the same key and the second write is a no-op.
CREATE TABLE probe_results (
  probe_id          text NOT NULL,
  scheduled_at      timestamptz NOT NULL,
  server_id         bigint NOT NULL,
  started_at        timestamptz NOT NULL,
  outcome           text NOT NULL CHECK (outcome IN ('up', 'degraded', 'auth_required', 'not_mcp', 'down')),
  error_type        text,
  error_message     text,
  http_status       integer,
  transport         text,
  connect_ms        double precision,
  initialize_ms     double precision,
  ping_ms           double precision,
  tools_list_ms     double precision,
  total_ms          double precision NOT NULL,
  protocol_version  text,
  server_info       jsonb,
  tool_count        integer,
  tools_hash        text,
  recorded_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (probe_id, scheduled_at)
) PARTITION BY RANGE (scheduled_at);
CREATE INDEX probe_results_server_time_idx ON probe_results (server_id, scheduled_at);

-- Creates the daily partitions covering [from_day, to_day]; safe to call repeatedly.
CREATE FUNCTION ensure_probe_partitions(from_day date, to_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  d date := from_day;
  created integer := 0;
  part text;
BEGIN
  WHILE d <= to_day LOOP
    part := 'probe_results_' || to_char(d, 'YYYYMMDD');
    IF to_regclass(part) IS NULL THEN
      EXECUTE format(
        'CREATE TABLE %I PARTITION OF probe_results FOR VALUES FROM (%L) TO (%L)',
        part, d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
      created := created + 1;
    END IF;
    d := d + 1;
  END LOOP;
  RETURN created;
END $$;

-- Drops daily partitions that end before keep_from_day; returns how many were dropped.
CREATE FUNCTION drop_probe_partitions_before(keep_from_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  dropped integer := 0;
BEGIN
  FOR r IN
    SELECT c.relname FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relname = 'probe_results' AND c.relname ~ '^probe_results_[0-9]{8}$'
  LOOP
    IF to_date(substring(r.relname from 15), 'YYYYMMDD') < keep_from_day THEN
      EXECUTE format('DROP TABLE %I', r.relname);
      dropped := dropped + 1;
    END IF;
  END LOOP;
  RETURN dropped;
END $$;

SELECT ensure_probe_partitions((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + 7);

-- Agent reports (SPEC 2.5). report_id is minted when the API accepts a report, so a batch that
-- is written twice (retry after an unclear failure) stores each report once.
CREATE TABLE interaction_reports (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  report_id      text NOT NULL UNIQUE,
  server_id      bigint NOT NULL REFERENCES servers (id),
  agent_id       text NOT NULL DEFAULT 'anonymous',
  key_id         bigint,
  received_at    timestamptz NOT NULL,
  success        boolean NOT NULL,
  latency_ms     double precision,
  tool_name      text,
  error_type     text,
  error_message  text,
  http_status    integer,
  recorded_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX interaction_reports_server_time_idx ON interaction_reports (server_id, received_at);
CREATE INDEX interaction_reports_time_idx ON interaction_reports (received_at);

-- (server, hour) pairs with new raw rows, marked in the same transaction as the rows; the
-- analyzer recomputes exactly these (recomputing is idempotent, so a retried pass is harmless).
CREATE TABLE rollup_dirty (
  server_id  bigint NOT NULL,
  hour       timestamptz NOT NULL,
  PRIMARY KEY (server_id, hour)
);

-- Per-server rollups; probes counts conclusive probes (up, degraded, down, not_mcp). Latency histograms use the fixed log buckets of packages/core, stored
-- as integer arrays so any window merges exactly into p50/p95/p99.
CREATE TABLE rollups_hourly (
  server_id            bigint NOT NULL,
  hour                 timestamptz NOT NULL,
  probes               integer NOT NULL DEFAULT 0,
  ups                  integer NOT NULL DEFAULT 0,   -- up + degraded: answered MCP
  degraded             integer NOT NULL DEFAULT 0,
  inconclusive         integer NOT NULL DEFAULT 0,   -- auth_required: neither up nor failed
  reports              integer NOT NULL DEFAULT 0,
  report_successes     integer NOT NULL DEFAULT 0,
  distinct_agents      integer NOT NULL DEFAULT 0,
  latency_hist         integer[] NOT NULL DEFAULT '{}',
  latency_sum_ms       double precision NOT NULL DEFAULT 0,
  report_latency_hist  integer[] NOT NULL DEFAULT '{}',
  report_latency_sum_ms double precision NOT NULL DEFAULT 0,
  report_latency_count integer NOT NULL DEFAULT 0,
  PRIMARY KEY (server_id, hour)
);
CREATE INDEX rollups_hourly_hour_idx ON rollups_hourly (hour);
CREATE TABLE rollups_daily (
  server_id            bigint NOT NULL,
  day                  date NOT NULL,
  probes               integer NOT NULL DEFAULT 0,
  ups                  integer NOT NULL DEFAULT 0,   -- up + degraded: answered MCP
  degraded             integer NOT NULL DEFAULT 0,
  inconclusive         integer NOT NULL DEFAULT 0,   -- auth_required: neither up nor failed
  reports              integer NOT NULL DEFAULT 0,
  report_successes     integer NOT NULL DEFAULT 0,
  distinct_agents      integer NOT NULL DEFAULT 0,
  latency_hist         integer[] NOT NULL DEFAULT '{}',
  latency_sum_ms       double precision NOT NULL DEFAULT 0,
  report_latency_hist  integer[] NOT NULL DEFAULT '{}',
  report_latency_sum_ms double precision NOT NULL DEFAULT 0,
  report_latency_count integer NOT NULL DEFAULT 0,
  trust_score          double precision,
  PRIMARY KEY (server_id, day)
);

CREATE TABLE baselines (
  category             text NOT NULL,
  window_days          integer NOT NULL,
  computed_at          timestamptz NOT NULL,
  servers              integer NOT NULL,
  samples              integer NOT NULL,
  latency_mean_ms      double precision,
  latency_stddev_ms    double precision,
  latency_log_mean     double precision,
  latency_log_stddev   double precision,
  latency_p50_ms       double precision,
  latency_p95_ms       double precision,
  success_rate_mean    double precision,
  success_rate_stddev  double precision,
  detail               jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (category, window_days)
);

CREATE TABLE anomalies (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  server_id         bigint NOT NULL REFERENCES servers (id),
  metric            text NOT NULL,
  scope             text NOT NULL,          -- 'self' (own rolling window) or 'category'
  observed          double precision NOT NULL,
  baseline_mean     double precision NOT NULL,
  baseline_stddev   double precision NOT NULL,
  baseline_samples  integer NOT NULL,
  z                 double precision NOT NULL,
  severity          text NOT NULL,
  detail            jsonb NOT NULL DEFAULT '{}',
  detected_at       timestamptz NOT NULL,
  cleared_at        timestamptz
);
CREATE INDEX anomalies_server_idx ON anomalies (server_id, detected_at);
CREATE UNIQUE INDEX anomalies_one_open_idx ON anomalies (server_id, metric, scope) WHERE cleared_at IS NULL;

-- A change of a server's tool list (tools hash), with what changed.
CREATE TABLE drift_events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  server_id    bigint NOT NULL REFERENCES servers (id),
  detected_at  timestamptz NOT NULL,
  old_hash     text,
  new_hash     text NOT NULL,
  added        text[] NOT NULL DEFAULT '{}',
  removed      text[] NOT NULL DEFAULT '{}',
  altered      text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX drift_events_server_idx ON drift_events (server_id, detected_at);

-- Agent API keys: only the SHA-256 of the secret is kept.
CREATE TABLE api_keys (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  prefix           text NOT NULL,            -- first characters, shown in logs and audits
  secret_sha256    bytea NOT NULL UNIQUE,
  scopes           text[] NOT NULL,
  trial_limit      integer NOT NULL,
  used             integer NOT NULL DEFAULT 0 CHECK (used >= 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  created_ip_hash  text,
  last_used_at     timestamptz,
  CHECK (used <= trial_limit)
);

-- Ed25519 receipt signing keys (distributed mode keeps them here so every replica signs alike).
CREATE TABLE signing_keys (
  seq          bigint GENERATED ALWAYS AS IDENTITY,   -- insertion (= commit) order, see the key store
  kid          text PRIMARY KEY,
  private_jwk  jsonb NOT NULL,
  public_jwk   jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz
);

CREATE TABLE receipts (
  id          text PRIMARY KEY,               -- rcpt_…
  jws         text NOT NULL,
  server_id   bigint,
  server_url  text NOT NULL,
  verdict     text NOT NULL,
  score       double precision,
  issued_at   timestamptz NOT NULL,
  kid         text NOT NULL,
  audit_index bigint
);
CREATE INDEX receipts_issued_idx ON receipts (issued_at);

-- Append-only audit log; idx is the leaf index of the Merkle log (contiguous from 0).
-- Leaf data is the canonical JSON of the row's fields (see packages/db audit.repository), so an
-- auditor can recompute every leaf hash from an export.
CREATE TABLE audit_events (
  idx          bigint PRIMARY KEY,
  event_id     text NOT NULL,
  event_type   text NOT NULL,
  occurred_at  timestamptz NOT NULL,
  server_id    bigint,
  agent_id     text,
  key_id       bigint,
  receipt_id   text,
  payload      jsonb NOT NULL,
  leaf_hash    bytea NOT NULL
);
CREATE INDEX audit_events_time_idx ON audit_events (occurred_at);
CREATE INDEX audit_events_receipt_idx ON audit_events (receipt_id) WHERE receipt_id IS NOT NULL;
CREATE INDEX audit_events_server_idx ON audit_events (server_id, occurred_at);
CREATE INDEX audit_events_agent_idx ON audit_events (agent_id, occurred_at);

-- Hashes of complete perfect subtrees of the Merkle log (level 0 = leaves), so proofs need
-- O(log n) lookups.
CREATE TABLE audit_tree_nodes (
  level  smallint NOT NULL,
  idx    bigint NOT NULL,
  hash   bytea NOT NULL,
  PRIMARY KEY (level, idx)
);

CREATE TABLE audit_checkpoints (
  tree_size   bigint PRIMARY KEY,
  root_hash   text NOT NULL,
  issued_at   timestamptz NOT NULL,
  kid         text NOT NULL,
  jws         text NOT NULL
);

CREATE TABLE compliance_snapshots (
  server_id        bigint NOT NULL REFERENCES servers (id),
  day              date NOT NULL,
  grade            text NOT NULL,
  risk_level       text NOT NULL,
  trust_score      double precision,
  continuity       jsonb NOT NULL,
  counts           jsonb NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (server_id, day)
);
