-- Incremental verification (A2): the entries with an id above after_id, or appended at or after
-- recheck_from (a transaction that drew a lower id but committed after the previous pass), checked as
-- audit_verify() checks them: each one's link to the entry before it in its chain (looked up by the
-- (chain, seq) index, so an entry verified earlier anchors the new ones), its content hash, the
-- head of every chain they touch, and that every chain head still has its entry. One row: the first
-- broken entry (problem not null; lowest id wins, then a link problem, a content mismatch, entries
-- missing at a chain's end, as audit_verify() orders them), the number of entries checked and the
-- highest id checked (null when none).
CREATE OR REPLACE FUNCTION audit_verify_since(after_id bigint, recheck_from timestamptz) RETURNS TABLE (entry_id bigint, chain text, seq integer, problem text, entries bigint, up_to bigint)
LANGUAGE sql STABLE AS $$
  WITH fresh AS MATERIALIZED (
    SELECT e.id, e.chain, e.seq, e.prev_hash, e.hash, e.hash <> audit_hash(e.prev_hash, audit_canonical(e)) AS bad_content
    FROM audit_entry e WHERE e.id > after_id OR e.at >= recheck_from
  ), problems AS (
    SELECT f.id, f.chain, f.seq, 1 AS rank,
           CASE WHEN f.seq <> 1 AND p.id IS NULL THEN 'sequence gap before this entry' ELSE 'previous hash does not match' END AS problem
    FROM fresh f LEFT JOIN audit_entry p ON p.chain = f.chain AND p.seq = f.seq - 1
    WHERE (f.seq <> 1 AND p.id IS NULL) OR f.prev_hash <> coalesce(p.hash, repeat('0', 64))
    UNION ALL
    SELECT f.id, f.chain, f.seq, 2, 'content does not match its hash' FROM fresh f WHERE f.bad_content
    UNION ALL
    -- A chain the new entries touch must end at its head (an entry appended past it breaks this).
    SELECT l.id, l.chain, h.seq, 3, 'entries missing after this one'
    FROM (SELECT DISTINCT f.chain FROM fresh f) c
    JOIN audit_chain_head h ON h.chain = c.chain
    CROSS JOIN LATERAL (SELECT e.id, e.chain, e.seq, e.hash FROM audit_entry e WHERE e.chain = c.chain ORDER BY e.seq DESC LIMIT 1) l
    WHERE l.seq <> h.seq OR l.hash <> h.hash
    UNION ALL
    -- Every head must still have its entry: a deleted last entry leaves no new entry to look at, so
    -- all heads are checked (one index probe each); the break is named at the chain's last entry.
    SELECT l.id, g.chain, g.seq, 3, 'entries missing after this one'
    FROM (
      SELECT h.chain, h.seq FROM audit_chain_head h
      LEFT JOIN audit_entry x ON x.chain = h.chain AND x.seq = h.seq
      WHERE x.id IS NULL OR x.hash <> h.hash
    ) g
    LEFT JOIN LATERAL (SELECT e.id FROM audit_entry e WHERE e.chain = g.chain ORDER BY e.seq DESC LIMIT 1) l ON true
  )
  SELECT b.id, b.chain, b.seq, b.problem, (SELECT count(*) FROM fresh), (SELECT max(f.id) FROM fresh f)
  FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT * FROM problems ORDER BY problems.id, problems.rank LIMIT 1) b ON true
$$;
