-- Verifying the audit trail (A2) in fewer passes; issue 7 asks for 1,000,000 entries under 10 s.
-- Only functions change; stored hashes and the canonical form (audit_canonical) are untouched.
--
-- Where the time went (1,000,000 entries in 100,000 chains of 10, 2 cores, measured as CPU time of
-- the server processes so the other sessions' load on the machine counts less):
--  * the content check called audit_hash(prev_hash, canonical) once per entry. audit_hash is declared
--    IMMUTABLE but calls convert_to, which is STABLE, so PostgreSQL never inlined it: every entry paid
--    a full SQL-function call (executor start and end) on top of the sha256. About 4 s of CPU of ~14 s
--    for the content check; writing the same expression inline here costs nothing of the guarantee
--    (byte for byte the same bytes are hashed: prev_hash, a newline, the canonical text, as UTF8).
--  * the chain heads were checked by one LATERAL index lookup per head (100,000 of them): now one
--    merge join of the heads (in key order) with the last entry of each chain, taken from the same
--    ordered pass that checks the links (lead(seq) IS NULL marks a chain's last entry).
--  * verifyAuditTrail then counted entries and chains in a second statement (another scan, and a
--    different snapshot than the one verified): the counts now come from the same pass.
-- The link pass reads entries in (chain, seq) order from the unique index (no sort) while the
-- content check stays a parallel aggregate (the per-entry canonical text and sha256 are the cost;
-- json_build_array alone is about half of it). Measured before/after: see the commit message and
-- docs/BENCHMARKS.md.
--
-- The answer is the same as before: the broken entry with the lowest id; on one entry a sequence gap
-- before a previous-hash mismatch before a content mismatch before "entries missing after this one";
-- chain heads without any entry last (entry_id NULL, ordered by chain).

-- One row: the first broken entry (problem not null) or, when everything verifies, problem null and
-- the number of entries and chains verified. Every entry's hash is recomputed, every link and every
-- chain head is checked, in one statement (one snapshot). LANGUAGE sql and not SECURITY DEFINER, so
-- it is inlined into the caller's query (parallel workers allowed) and runs with the caller's grants.
CREATE OR REPLACE FUNCTION audit_verify() RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text, entries bigint, chains bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH content AS MATERIALIZED (
    -- The lowest id whose stored hash is not sha256(prev_hash || '\n' || canonical): audit_hash,
    -- written out so that it is inlined. A parallel aggregate.
    SELECT min(e.id + 0) AS id FROM audit_entry e
    WHERE e.hash <> encode(sha256(convert_to(e.prev_hash || E'\n' || audit_canonical(e), 'UTF8')), 'hex')
  ), ordered AS (
    SELECT e.id, e.chain, e.seq, e.prev_hash, e.hash,
           lag(e.hash) OVER w AS expected_prev, lag(e.seq) OVER w AS previous_seq, lead(e.seq) OVER w IS NULL AS is_last
    FROM audit_entry e
    WINDOW w AS (PARTITION BY e.chain ORDER BY e.seq)
  ), checked AS (
    SELECT o.id, coalesce(o.chain, h.chain) AS chain, o.seq AS entry_seq, h.seq AS head_seq,
      CASE
        WHEN o.id IS NULL THEN 'entries missing after this one'
        WHEN o.seq <> coalesce(o.previous_seq, 0) + 1 THEN 'sequence gap before this entry'
        WHEN o.prev_hash <> coalesce(o.expected_prev, repeat('0', 64)) THEN 'previous hash does not match'
        WHEN o.id = (SELECT c.id FROM content c) THEN 'content does not match its hash'
        WHEN o.is_last AND h.chain IS NOT NULL AND (o.seq <> h.seq OR o.hash <> h.hash) THEN 'entries missing after this one'
      END AS problem,
      h.chain IS NOT NULL AND (o.id IS NULL OR o.is_last) AS is_head
    -- A chain's entries meet its head; a head without any entry comes out with o.* null.
    FROM ordered o FULL JOIN audit_chain_head h ON h.chain = o.chain
  ), summary AS (
    SELECT (array_agg(jsonb_build_array(c.id, c.chain,
                        CASE WHEN c.problem = 'entries missing after this one' THEN c.head_seq ELSE c.entry_seq END, c.problem)
                      ORDER BY c.id NULLS LAST, c.chain) FILTER (WHERE c.problem IS NOT NULL))[1] AS first,
           count(c.id) AS entries, count(*) FILTER (WHERE c.is_head) AS chains
    FROM checked c
  )
  SELECT (s.first->>0)::bigint, s.first->>1, (s.first->>2)::integer, s.first->>3, s.entries, s.chains FROM summary s
$$;

-- Same signature and answer as before: no row when the whole trail verifies.
CREATE OR REPLACE FUNCTION audit_first_broken() RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT v.entry_id, v.chain, v.seq, v.problem FROM audit_verify() v WHERE v.problem IS NOT NULL
$$;

GRANT EXECUTE ON FUNCTION audit_verify() TO ledger_app;
