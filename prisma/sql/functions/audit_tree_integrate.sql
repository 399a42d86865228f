-- The sequencer of the audit tree (docs/AUDIT.md): appends up to max_leaves committed entries that are
-- not yet in the tree, in entry id order, as its next leaves, stores every complete subtree they
-- complete, and returns the new tree size. One sequencer at a time (an advisory transaction lock);
-- appends to audit_entry never wait for it. Leaf hash: SHA-256(0x00 || the 32 bytes of the entry's
-- hash); node: SHA-256(0x01 || left || right) (RFC 9162). The right edge of the tree (one complete
-- subtree per bit set in the size) is read once, O(log n) rows, and kept in memory; the new leaves and
-- nodes are written with one statement each. SECURITY DEFINER: the application role may call it, not
-- write the tree.
CREATE OR REPLACE FUNCTION audit_tree_integrate(max_leaves integer) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  v_size bigint;
  v_edge bytea[] := '{}';
  v_hash bytea;
  v_idx bigint;
  v_level integer;
  v_leaf_idx bigint[] := '{}';
  v_leaf_entry bigint[] := '{}';
  v_leaf_hash bytea[] := '{}';
  v_node_level smallint[] := '{}';
  v_node_idx bigint[] := '{}';
  v_node_hash bytea[] := '{}';
  r record;
BEGIN
  PERFORM pg_advisory_xact_lock(20585, 2);
  SELECT coalesce(max(l.idx) + 1, 0) INTO v_size FROM public.audit_tree_leaf l;
  -- v_edge[level + 1]: the complete subtree of that level on the right edge (bit `level` of the size).
  FOR v_level IN 0..62 LOOP
    EXIT WHEN (v_size >> v_level) = 0;
    IF ((v_size >> v_level) & 1) = 1 THEN
      IF v_level = 0 THEN
        SELECT l.hash INTO STRICT v_hash FROM public.audit_tree_leaf l WHERE l.idx = v_size - 1;
      ELSE
        SELECT n.hash INTO STRICT v_hash FROM public.audit_tree_node n
         WHERE n.level = v_level AND n.idx = (v_size >> v_level) - 1;
      END IF;
      v_edge[v_level + 1] := v_hash;
    END IF;
  END LOOP;
  FOR r IN
    SELECT p.entry_id, e.hash FROM public.audit_tree_pending p JOIN public.audit_entry e ON e.id = p.entry_id
     ORDER BY p.entry_id LIMIT max_leaves
  LOOP
    v_hash := pg_catalog.sha256('\x00'::bytea || decode(r.hash, 'hex'));
    v_leaf_idx := v_leaf_idx || v_size;
    v_leaf_entry := v_leaf_entry || r.entry_id;
    v_leaf_hash := v_leaf_hash || v_hash;
    v_idx := v_size;
    v_level := 0;
    -- An odd index completes a subtree with its left neighbour, which is on the edge: merge upwards.
    WHILE (v_idx & 1) = 1 LOOP
      v_hash := pg_catalog.sha256('\x01'::bytea || v_edge[v_level + 1] || v_hash);
      v_edge[v_level + 1] := NULL;
      v_level := v_level + 1;
      v_idx := v_idx >> 1;
      v_node_level := v_node_level || v_level::smallint;
      v_node_idx := v_node_idx || v_idx;
      v_node_hash := v_node_hash || v_hash;
    END LOOP;
    v_edge[v_level + 1] := v_hash;
    v_size := v_size + 1;
  END LOOP;
  IF cardinality(v_leaf_idx) = 0 THEN
    RETURN v_size;
  END IF;
  INSERT INTO public.audit_tree_leaf (idx, entry_id, hash)
  SELECT * FROM unnest(v_leaf_idx, v_leaf_entry, v_leaf_hash);
  INSERT INTO public.audit_tree_node (level, idx, hash)
  SELECT * FROM unnest(v_node_level, v_node_idx, v_node_hash);
  DELETE FROM public.audit_tree_pending p WHERE p.entry_id = ANY (v_leaf_entry);
  RETURN v_size;
END
$$;
