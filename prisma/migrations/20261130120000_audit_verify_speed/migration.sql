-- Verifying the audit trail at 1,000,000 entries under 10 s (issue 7). Only functions change.
-- The cost of audit_first_broken() is recomputing every entry's hash (jsonb canonical form + sha256);
-- the chain-link checks need only a sort of narrow columns. The content check now runs as its own
-- aggregate, which PostgreSQL spreads over parallel workers (the canonical-form and hash functions
-- are pure, so they are marked PARALLEL SAFE); the first broken entry and its problem are the same
-- as before: the lowest id among broken entries, a sequence gap before a previous-hash mismatch
-- before a content mismatch on the same entry, and chain heads pointing past their last entry.
-- Still LANGUAGE sql and not SECURITY DEFINER, so PostgreSQL inlines it into the caller's query
-- (which is what lets the planner use parallel workers) and it runs with the caller's grants.
ALTER FUNCTION audit_canonical(audit_entry) PARALLEL SAFE;
ALTER FUNCTION audit_hash(text, text) PARALLEL SAFE;

CREATE OR REPLACE FUNCTION audit_first_broken() RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH links AS (
    SELECT o.id, o.chain, o.seq,
      CASE
        WHEN o.seq <> coalesce(o.previous_seq, 0) + 1 THEN 'sequence gap before this entry'
        WHEN o.prev_hash <> coalesce(o.expected_prev, repeat('0', 64)) THEN 'previous hash does not match'
      END AS problem
    FROM (
      SELECT e.id, e.chain, e.seq, e.prev_hash, lag(e.hash) OVER w AS expected_prev, lag(e.seq) OVER w AS previous_seq
      FROM audit_entry e
      WINDOW w AS (PARTITION BY e.chain ORDER BY e.seq)
    ) o
  ), content AS (
    SELECT min(e.id + 0) AS id FROM audit_entry e WHERE e.hash <> audit_hash(e.prev_hash, audit_canonical(e))
  ), tails AS (
    SELECT last.id, h.chain, h.seq, 'entries missing after this one'::text AS problem
    FROM audit_chain_head h
    LEFT JOIN LATERAL (SELECT e.id, e.seq, e.hash FROM audit_entry e WHERE e.chain = h.chain ORDER BY e.seq DESC LIMIT 1) last ON true
    WHERE last.seq IS DISTINCT FROM h.seq OR last.hash IS DISTINCT FROM h.hash
  )
  SELECT id, chain, seq, problem FROM (
    SELECT id, chain, seq, problem, 1 AS rank FROM links WHERE problem IS NOT NULL
    UNION ALL
    SELECT e.id, e.chain, e.seq, 'content does not match its hash', 2 FROM content c JOIN audit_entry e ON e.id = c.id
    UNION ALL
    SELECT id, chain, seq, problem, 3 FROM tails
  ) p
  ORDER BY id NULLS LAST, rank
  LIMIT 1
$$;
