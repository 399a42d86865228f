-- One row: the first broken entry (problem not null) or, when everything verifies, problem null and
-- the number of entries and chains verified. Every entry's hash is recomputed, every link and every
-- chain head is checked, in one statement (one snapshot). LANGUAGE sql and not SECURITY DEFINER, so
-- it is inlined into the caller's query (parallel workers allowed) and runs with the caller's grants.
-- Where the time goes and why it is one statement: 20261130140100_audit_verify_single_pass.
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
