-- A claim of the agent API, first step, in one statement (lib/api/held-claim.ts): for each request,
-- its runtime key's row (read on every request, never cached: Z6), the claim key's held state
-- (ledger_claim_peek, the one definition of "held") and, when the key's secret matches, the key is not
-- revoked and its workflows cover the run's, the request's Idempotency-Key record (Z5): stored with the
-- losing claim's answer when the claim key is held (a replayed claim is then answered from this one
-- round trip), reserved without an answer when it is not (the claim then runs under that reservation
-- and completes it, as a reservation made on its own would be: one round trip and one commit fewer
-- per winning claim). A request of which any check fails stores nothing here and is decided by the
-- application exactly as before (401 or 403 audited).
--
-- The checks here only decide whether to store: the application still makes every check itself on
-- the returned key row and refuses from there, and it compares the stored answer with its own,
-- correcting the record should they ever differ (a reservation is completed or freed with the real
-- answer). The stored answer is the losing claim's body as the API gives it (changedAt as an ISO 8601
-- UTC time with milliseconds, as JSON.stringify writes a Date).
--
-- A key used before is left as it is (ON CONFLICT DO NOTHING): that request gets no record_id and the
-- earlier record decides. The same Idempotency-Key twice in one call behaves as two requests one after
-- the other: the first (in argument order) stores its record, the second finds the key taken.
--
-- Its plan is generic (plan_cache_mode = force_generic_plan), as ledger_claim_batch's: it takes
-- arrays whose length changes from call to call, so PostgreSQL judged every custom plan cheaper and
-- planned the statement again on every call. Measured: three quarters of the database's CPU per
-- replayed claim went to that planning (docs/BENCHMARKS.md).
CREATE OR REPLACE FUNCTION ledger_claim_peek_store(
  p_prefixes text[], p_secret_hashes text[], p_workflows text[], p_keys text[],
  p_idempotency_keys text[], p_request_hashes text[], p_scope_prefix text
) RETURNS TABLE (
  ord integer, id text, name text, secret_hash text, workflows text[], revoked_at timestamptz,
  last_used_at timestamptz, epoch integer, state "EffectState", changed_by text, changed_at timestamptz,
  record_id text, response_body jsonb
)
LANGUAGE sql
SET plan_cache_mode = force_generic_plan
AS $$
  WITH v AS (
    SELECT u.o::integer AS o, u.prefix, u.secret_hash, u.workflow, u.claim_key, u.idem, u.request_hash
      FROM unnest(p_prefixes, p_secret_hashes, p_workflows, p_keys, p_idempotency_keys, p_request_hashes)
           WITH ORDINALITY AS u(prefix, secret_hash, workflow, claim_key, idem, request_hash, o)
  ), k AS (
    SELECT v.o, r.id::text AS id, r.name, r.secret_hash, r.workflows, r.revoked_at, r.last_used_at,
           r.secret_hash = v.secret_hash AND r.revoked_at IS NULL
             AND (v.workflow = ANY (r.workflows) OR '*' = ANY (r.workflows)) AS may_claim
      FROM v JOIN runtime_key r ON r.prefix = v.prefix
  ), held AS (
    SELECT p.ord AS o, p.epoch, p.state, p.changed_by, p.changed_at FROM ledger_claim_peek(p_keys) p
  ), answer AS (
    SELECT v.o, p_scope_prefix || k.id AS scope, v.idem, v.request_hash,
           CASE WHEN h.o IS NOT NULL THEN jsonb_build_object(
             'claimed', false, 'key', v.claim_key, 'epoch', h.epoch, 'state', h.state,
             'changedBy', h.changed_by,
             'changedAt', to_char(h.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
           ) END AS body
      FROM v JOIN k ON k.o = v.o LEFT JOIN held h ON h.o = v.o
     WHERE k.may_claim
  ), stored AS (
    INSERT INTO idempotency_record AS r (scope, key, request_hash, response_status, response_body, completed_at)
    SELECT a.scope, a.idem, a.request_hash, CASE WHEN a.body IS NOT NULL THEN 200 END, a.body,
           CASE WHEN a.body IS NOT NULL THEN now() END
      FROM answer a ORDER BY a.o
    ON CONFLICT (scope, key) DO NOTHING
    RETURNING r.id::text AS id, r.scope, r.key, r.response_body
  ), first AS (
    SELECT DISTINCT ON (a.scope, a.idem) a.o, a.scope, a.idem FROM answer a ORDER BY a.scope, a.idem, a.o
  )
  SELECT v.o, k.id, k.name, k.secret_hash, k.workflows, k.revoked_at, k.last_used_at,
         h.epoch, h.state, h.changed_by, h.changed_at, s.id, s.response_body
    FROM v
    LEFT JOIN k ON k.o = v.o
    LEFT JOIN held h ON h.o = v.o
    LEFT JOIN first f ON f.o = v.o
    LEFT JOIN stored s ON s.scope = f.scope AND s.key = f.idem
$$;
