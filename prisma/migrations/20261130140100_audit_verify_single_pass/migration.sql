-- Verifying the audit trail (A2) in one statement; issue 7 asks for 1,000,000 entries under 10 s.
-- Only functions change; stored hashes and the canonical form (audit_canonical) are untouched.
--
-- Where the time went (1,000,000 entries in 100,000 chains of 10, 2 cores; EXPLAIN ANALYZE of the
-- previous audit_first_broken(), whose three parts ran one after the other): the content check
-- (canonical text + sha256 per entry, parallel aggregate) about 70%, the link check (window over
-- (chain, seq), read in index order) about 22%, the chain heads (one LATERAL index lookup per head,
-- 100,000 of them) about 7%, then verify.ts counted entries and chains in a second statement.
-- Per entry, serial CPU: json_build_array of the 20 fields ~6.5 us, to_char of the time ~1 us,
-- and audit_hash ~5 us, of which ~4 us was only the call: audit_hash is declared IMMUTABLE but calls
-- convert_to, which is STABLE, so PostgreSQL never inlined it and ran a full SQL-function call
-- (executor start and end) per entry around a ~1.5 us sha256.
--
-- What changed (same guarantees: every hash recomputed, every link and every chain head checked):
--  * audit_hash is declared STABLE, like the convert_to it calls, so PostgreSQL inlines it (the
--    same bytes, evaluated in place): ~4 s less CPU at 1,000,000 entries;
--  * links and heads are one pass: entries in (chain, seq) order with lag/lead, merged with the
--    chain heads in key order (a chain's last entry is the one without a next; a head without any
--    entry comes out of the full join alone), instead of 100,000 lateral lookups;
--  * that pass and the content check are the two branches of one Append, which PostgreSQL runs as a
--    Parallel Append: one process walks the links while the others recompute hashes, instead of
--    the three parts running back to back;
--  * the counts verifyAuditTrail reports come from the same statement (one snapshot, no re-scan).
-- The canonical text is unchanged (json_build_array stays: a hand-built equivalent needs an escape
-- check per field and measured slower once that check is counted).
-- Measured back to back on this machine with other sessions' benchmarks running (load 7-12 on 2
-- cores), 1,000,000 entries, median of 5: previous audit_first_broken() + the count statement
-- 20.3 s wall, 18.2 s CPU of all server processes; audit_verify() 14.1 s wall, 14.4 s CPU.
--
-- The answer is the same as before: the broken entry with the lowest id; on one entry a sequence gap
-- before a previous-hash mismatch before a content mismatch before "entries missing after this one";
-- chain heads without any entry last (entry_id NULL, then by chain).

-- audit_hash is declared with the volatility of what it calls (convert_to is STABLE), which is what
-- lets PostgreSQL inline it: here, and in every append of the chain trigger. Same body, same bytes.
ALTER FUNCTION audit_hash(text, text) STABLE;

-- One row: the first broken entry (problem not null) or, when everything verifies, problem null and
-- the number of entries and chains verified. Every entry's hash is recomputed, every link and every
-- chain head is checked, in one statement (one snapshot). LANGUAGE sql and not SECURITY DEFINER, so
-- it is inlined into the caller's query (parallel workers allowed) and runs with the caller's grants.
CREATE OR REPLACE FUNCTION audit_verify() RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text, entries bigint, chains bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH parts AS (
    -- Two independent parts under one Append, which PostgreSQL runs as a Parallel Append: while
    -- one process checks the links and heads in (chain, seq) order, the others recompute hashes.
    -- The links and the chain heads: one pass in (chain, seq) order (a chain's last entry is the
    -- one without a next), merged with the heads in key order; a head without any entry comes out
    -- with the entry columns null. Also counts what it verified.
    SELECT (l.first->>0)::bigint AS link_id, l.first->>1 AS link_chain, (l.first->>2)::integer AS link_seq, l.first->>3 AS link_problem,
           l.entries, l.chains, NULL::bigint AS content_id
    FROM (
      SELECT (array_agg(jsonb_build_array(c.id, c.chain, CASE WHEN c.problem = 'entries missing after this one' THEN c.head_seq ELSE c.entry_seq END, c.problem)
                        ORDER BY c.id NULLS LAST, c.chain) FILTER (WHERE c.problem IS NOT NULL))[1] AS first,
             count(c.id) AS entries, count(*) FILTER (WHERE c.is_head) AS chains
      FROM (
        SELECT o.id, coalesce(o.chain, h.chain) AS chain, o.seq AS entry_seq, h.seq AS head_seq,
          CASE
            WHEN o.id IS NULL THEN 'entries missing after this one'
            WHEN o.seq <> coalesce(o.previous_seq, 0) + 1 THEN 'sequence gap before this entry'
            WHEN o.prev_hash <> coalesce(o.expected_prev, repeat('0', 64)) THEN 'previous hash does not match'
            WHEN o.is_last AND h.chain IS NOT NULL AND (o.seq <> h.seq OR o.hash <> h.hash) THEN 'entries missing after this one'
          END AS problem,
          h.chain IS NOT NULL AND (o.id IS NULL OR o.is_last) AS is_head
        FROM (
          SELECT e.id, e.chain, e.seq, e.prev_hash, e.hash,
                 lag(e.hash) OVER w AS expected_prev, lag(e.seq) OVER w AS previous_seq, lead(e.seq) OVER w IS NULL AS is_last
          FROM audit_entry e
          WINDOW w AS (PARTITION BY e.chain ORDER BY e.seq)
        ) o FULL JOIN audit_chain_head h ON h.chain = o.chain
      ) c
    ) l
    UNION ALL
    -- The content: every entry's hash recomputed (audit_hash, now inlined), spread over the
    -- parallel workers; yields the ids of entries that do not match.
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, e.id FROM audit_entry e
    WHERE e.hash <> audit_hash(e.prev_hash, audit_canonical(e))
  ), r AS MATERIALIZED (
    -- One row (an aggregate over both parts; MATERIALIZED keeps it a plan of its own, which is
    -- what lets the planner put the Parallel Append under it).
    SELECT min(p.link_id) AS link_id, max(p.link_chain) AS link_chain, max(p.link_seq) AS link_seq, max(p.link_problem) AS link_problem,
           max(p.entries) AS entries, max(p.chains) AS chains, min(p.content_id) AS content_id
    FROM parts p
  )
  -- The lowest id wins; on the same entry a link problem beats a content mismatch, which beats
  -- "entries missing after this one"; heads without entries (id null) come last.
  SELECT CASE WHEN x.use_content THEN r.content_id ELSE r.link_id END,
         CASE WHEN x.use_content THEN (SELECT e.chain FROM audit_entry e WHERE e.id = r.content_id) ELSE r.link_chain END,
         CASE WHEN x.use_content THEN (SELECT e.seq FROM audit_entry e WHERE e.id = r.content_id) ELSE r.link_seq END,
         CASE WHEN x.use_content THEN 'content does not match its hash' ELSE r.link_problem END,
         r.entries, r.chains
  FROM r, LATERAL (SELECT r.content_id IS NOT NULL AND (r.link_problem IS NULL OR r.link_id IS NULL OR r.content_id < r.link_id
         OR (r.content_id = r.link_id AND r.link_problem = 'entries missing after this one')) AS use_content) x
$$;

-- Same signature and answer as before: no row when the whole trail verifies.
CREATE OR REPLACE FUNCTION audit_first_broken() RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT v.entry_id, v.chain, v.seq, v.problem FROM audit_verify() v WHERE v.problem IS NOT NULL
$$;

GRANT EXECUTE ON FUNCTION audit_verify() TO ledger_app;
