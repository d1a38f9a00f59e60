/**
 * Version 1 of the ledger's schema: the payouts of every account's runs, one row per (account, request_id), kept as
 * the audit trail; the runs; the sweep lock of the unknown outcomes; and the functions that move a payout from state
 * to state, each in one statement, so that a worker that dies between two steps leaves nothing half-written. `s` is
 * the schema's name, already checked and quoted.
 */
export function payoutLedgerV1(s: string): string {
  return `
CREATE TABLE ${s}.payouts (
  account text NOT NULL,
  request_id text NOT NULL,
  run_id text NOT NULL,
  request jsonb NOT NULL,
  fingerprint text NOT NULL,
  state text NOT NULL
    CHECK (state IN ('pending', 'queued', 'sending', 'retrying', 'sent', 'refused', 'unknown')),
  attempt integer NOT NULL DEFAULT 0,
  token text,
  outcome jsonb,
  handled jsonb NOT NULL DEFAULT '[]',
  completes_run boolean NOT NULL DEFAULT false,
  resolution_decision text CHECK (resolution_decision IN ('sent', 'absent')),
  awaits_job boolean NOT NULL DEFAULT false,
  resolved_by text,
  resolution_note text,
  resolved_at timestamptz,
  given_up_at timestamptz,
  trace jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  queued_at timestamptz,
  sending_at timestamptz,
  settled_at timestamptz,
  state_since timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account, request_id)
);
COMMENT ON TABLE ${s}.payouts IS 'nestjs-payouts: one row per payout of a run (account, request_id), kept as the audit trail';
COMMENT ON COLUMN ${s}.payouts.token IS 'The worker attempt that wrote the sending mark, kept with the outcome it recorded';
COMMENT ON COLUMN ${s}.payouts.awaits_job IS 'Decided sent; the job that runs its sent handlers has not run since';
COMMENT ON COLUMN ${s}.payouts.outcome IS 'The reply ({"reply": {status, body}}) or the error ({"error": {...}}), credentials redacted';
CREATE INDEX payouts_run ON ${s}.payouts (account, run_id, state);
CREATE INDEX payouts_unknown ON ${s}.payouts (account, state_since, request_id) WHERE state = 'unknown';
CREATE INDEX payouts_unsettled ON ${s}.payouts (account, request_id)
  WHERE state IN ('pending', 'queued', 'sending', 'retrying');
CREATE INDEX payouts_awaiting_job ON ${s}.payouts (account, state_since) WHERE awaits_job;
CREATE INDEX payouts_pending ON ${s}.payouts (account, created_at) WHERE state = 'pending';
CREATE INDEX payouts_settled ON ${s}.payouts (settled_at) WHERE state IN ('sent', 'refused');

CREATE TABLE ${s}.payout_runs (
  account text NOT NULL,
  run_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  PRIMARY KEY (account, run_id)
);

CREATE TABLE ${s}.sweep_locks (
  account text PRIMARY KEY,
  token text NOT NULL,
  expires_at timestamptz NOT NULL
);

-- Claims each item ({"requestId", "fingerprint", "request"}) for a run, as 'queued' or 'pending': what became of each,
-- in order. The first of a request_id is added; a later one, or one already there, is 'already' (same body) or
-- 'conflict' (another body).
CREATE FUNCTION ${s}.payout_claim(p_account text, p_run_id text, p_state text, p_items jsonb, p_trace jsonb)
RETURNS TABLE (request_id text, verdict text, state text, run_id text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  added text[];
BEGIN
  WITH item AS (
    SELECT DISTINCT ON (i.value->>'requestId') i.value
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(value, ord)
    ORDER BY i.value->>'requestId', i.ord
  ), inserted AS (
    INSERT INTO ${s}.payouts AS p (account, request_id, run_id, request, fingerprint, state, trace, queued_at)
    SELECT p_account, item.value->>'requestId', p_run_id, item.value->'request', item.value->>'fingerprint', p_state,
      p_trace, CASE WHEN p_state = 'queued' THEN now() END
    FROM item
    ON CONFLICT ON CONSTRAINT payouts_pkey DO NOTHING
    RETURNING p.request_id
  )
  SELECT coalesce(array_agg(inserted.request_id), '{}') INTO added FROM inserted;
  IF cardinality(added) > 0 THEN
    INSERT INTO ${s}.payout_runs AS r (account, run_id) VALUES (p_account, p_run_id)
    ON CONFLICT ON CONSTRAINT payout_runs_pkey DO NOTHING;
  END IF;
  RETURN QUERY
  SELECT i.value->>'requestId',
    CASE
      WHEN i.value->>'requestId' = ANY (added)
        AND row_number() OVER (PARTITION BY i.value->>'requestId' ORDER BY i.ord) = 1 THEN 'queued'
      WHEN p.fingerprint = i.value->>'fingerprint' THEN 'already'
      ELSE 'conflict'
    END,
    p.state, p.run_id
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(value, ord)
  JOIN ${s}.payouts p ON p.account = p_account AND p.request_id = i.value->>'requestId'
  ORDER BY i.ord;
END
$fn$;

-- Writes the sending mark before a request leaves, committed before it leaves: from pending, queued or retrying only.
-- A mark already there means a worker began to send and recorded no outcome: 'interrupted', unless p_take_over. One
-- UPDATE, no row lock taken before it: an UPDATE that waited for another's commit checks its WHERE again on the row
-- that committed, so of two workers that begin the same payout, one sends and the other finds its mark. Should the
-- row change between an UPDATE that matched nothing and the read that says why (a decision queued it again), the
-- UPDATE is tried again.
CREATE FUNCTION ${s}.payout_begin(p_account text, p_request_id text, p_token text, p_take_over boolean)
RETURNS TABLE (step text, attempt integer, resolution_decision text, resolved_by text, resolution_note text,
  resolved_at text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  current text;
BEGIN
  LOOP
    RETURN QUERY
    UPDATE ${s}.payouts p SET state = 'sending', token = p_token, attempt = p.attempt + 1, sending_at = now(),
      state_since = now(), queued_at = coalesce(p.queued_at, now())
    WHERE p.account = p_account AND p.request_id = p_request_id
      AND (p.state IN ('pending', 'queued', 'retrying') OR (p.state = 'sending' AND p_take_over))
    RETURNING 'send'::text, p.attempt, p.resolution_decision, p.resolved_by, p.resolution_note,
      to_char(p.resolved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
    IF FOUND THEN RETURN; END IF;
    -- NULL when there is no such payout.
    SELECT p.state INTO current FROM ${s}.payouts p WHERE p.account = p_account AND p.request_id = p_request_id;
    CONTINUE WHEN current IN ('pending', 'queued', 'retrying') OR (current = 'sending' AND p_take_over);
    -- A decision sent no longer awaits its job: this is it.
    IF current = 'sent' THEN
      UPDATE ${s}.payouts p SET awaits_job = false
      WHERE p.account = p_account AND p.request_id = p_request_id AND p.awaits_job;
    END IF;
    RETURN QUERY SELECT CASE WHEN current IS NULL THEN 'missing' WHEN current = 'sending' THEN 'interrupted'
      ELSE 'settled' END, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text;
    RETURN;
  END LOOP;
END
$fn$;

-- Replaces the mark of p_token ('*': anyone's) with the outcome: 'lost' when the mark is not (or no longer) that
-- token's; 'settled'; or 'last' when no other payout of its run waits to be sent, and the caller then asks
-- payout_run_complete once this commits. The token stays with the outcome, so that a call made again (its reply was
-- lost, the commit was not) finds the outcome it wrote and answers as before. The settles of a run commit side by
-- side (each waits for its commit to reach the disk, and the waits overlap): each holds the run's lock shared until
-- it commits, which payout_run_complete takes whole, so the completion waits for every outcome recorded before it.
CREATE FUNCTION ${s}.payout_settle(p_account text, p_request_id text, p_token text, p_state text, p_outcome jsonb)
RETURNS text
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  run text;
BEGIN
  UPDATE ${s}.payouts p SET state = p_state, outcome = p_outcome, token = p_token, handled = '[]',
    state_since = now(), completes_run = false,
    settled_at = CASE WHEN p_state = 'retrying' THEN NULL ELSE now() END
  WHERE p.account = p_account AND p.request_id = p_request_id AND p.state = 'sending'
    AND (p_token = '*' OR p.token = p_token)
  RETURNING p.run_id INTO run;
  IF NOT FOUND THEN
    SELECT p.run_id INTO run FROM ${s}.payouts p
    WHERE p.account = p_account AND p.request_id = p_request_id AND p.state = p_state AND p.token = p_token;
    IF NOT FOUND THEN RETURN 'lost'; END IF;
  END IF;
  IF p_state = 'retrying' THEN RETURN 'settled'; END IF;
  PERFORM pg_advisory_xact_lock_shared(1346459984, hashtext(p_account || '/' || run));
  -- Read after the lock is taken (a statement of its own, so a snapshot of its own). A payout still to be sent will
  -- record its outcome after this, and its call, or a later one, asks. The call whose read comes last finds none
  -- waiting, and its question waits for the outcomes of every call that read before it.
  IF EXISTS (
    SELECT 1 FROM ${s}.payouts p
    WHERE p.account = p_account AND p.run_id = run AND p.state IN ('pending', 'queued', 'retrying')
  ) THEN
    RETURN 'settled';
  END IF;
  RETURN 'last';
END
$fn$;

-- Completes the run of a settled payout when nothing of it is left to send: 'completed' for the one call that does
-- (the payout is marked as the one that completed it), 'settled' otherwise. Called after the payout's settle has
-- committed. It takes the run's lock whole, so it waits for every settle that holds it shared (their outcomes are
-- committed when it reads), and the calls of one run take turns; the lock is held while nothing is written but the
-- completion, so its commit waits for no disk otherwise. completed_at makes a run complete once.
CREATE FUNCTION ${s}.payout_run_complete(p_account text, p_request_id text)
RETURNS text
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  run text;
BEGIN
  SELECT p.run_id INTO run FROM ${s}.payouts p
  WHERE p.account = p_account AND p.request_id = p_request_id AND p.state IN ('sent', 'refused', 'unknown');
  IF NOT FOUND THEN RETURN 'settled'; END IF;
  PERFORM pg_advisory_xact_lock(1346459984, hashtext(p_account || '/' || run));
  IF EXISTS (
    SELECT 1 FROM ${s}.payouts p
    WHERE p.account = p_account AND p.run_id = run AND p.state IN ('pending', 'queued', 'sending', 'retrying')
  ) THEN
    RETURN 'settled';
  END IF;
  UPDATE ${s}.payout_runs r SET completed_at = now()
  WHERE r.account = p_account AND r.run_id = run AND r.completed_at IS NULL;
  IF NOT FOUND THEN RETURN 'settled'; END IF;
  UPDATE ${s}.payouts p SET completes_run = true WHERE p.account = p_account AND p.request_id = p_request_id;
  RETURN 'completed';
END
$fn$;

-- A decision on an unknown outcome: 'sent' (final) or 'absent' (queued again, to send once more).
CREATE FUNCTION ${s}.payout_resolve(p_account text, p_request_id text, p_decision text, p_by text, p_note text,
  p_at timestamptz)
RETURNS text
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  current text;
BEGIN
  UPDATE ${s}.payouts p
  SET state = CASE WHEN p_decision = 'sent' THEN 'sent' ELSE 'queued' END, resolution_decision = p_decision,
    awaits_job = p_decision = 'sent', resolved_by = p_by, resolution_note = p_note, resolved_at = p_at,
    state_since = now(), handled = '[]', completes_run = false, given_up_at = NULL,
    settled_at = CASE WHEN p_decision = 'sent' THEN now() ELSE NULL END,
    queued_at = CASE WHEN p_decision = 'sent' THEN p.queued_at ELSE now() END
  WHERE p.account = p_account AND p.request_id = p_request_id AND p.state = 'unknown';
  IF FOUND THEN RETURN 'resolved'; END IF;
  SELECT p.state INTO current FROM ${s}.payouts p WHERE p.account = p_account AND p.request_id = p_request_id;
  RETURN coalesce(current, 'missing');
END
$fn$;
`;
}
