-- CreateTable
CREATE TABLE "audit_tree_leaf" (
    "idx" BIGINT NOT NULL,
    "entry_id" BIGINT NOT NULL,
    "hash" BYTEA NOT NULL,

    CONSTRAINT "audit_tree_leaf_pkey" PRIMARY KEY ("idx")
);

-- CreateTable
CREATE TABLE "audit_tree_node" (
    "level" SMALLINT NOT NULL,
    "idx" BIGINT NOT NULL,
    "hash" BYTEA NOT NULL,

    CONSTRAINT "audit_tree_node_pkey" PRIMARY KEY ("level","idx")
);

-- CreateTable
CREATE TABLE "audit_tree_pending" (
    "entry_id" BIGINT NOT NULL,

    CONSTRAINT "audit_tree_pending_pkey" PRIMARY KEY ("entry_id")
);

-- CreateTable
CREATE TABLE "audit_tree_head" (
    "id" BIGSERIAL NOT NULL,
    "size" BIGINT NOT NULL,
    "root" BYTEA NOT NULL,
    "note" TEXT NOT NULL,
    "stored_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_tree_head_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_tree_cosignature" (
    "id" BIGSERIAL NOT NULL,
    "size" BIGINT NOT NULL,
    "root" BYTEA NOT NULL,
    "witness" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_tree_cosignature_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "audit_tree_leaf_entry_id_key" ON "audit_tree_leaf"("entry_id");

-- CreateIndex
CREATE INDEX "audit_tree_head_size_idx" ON "audit_tree_head"("size");

-- CreateIndex
CREATE INDEX "audit_tree_cosignature_size_idx" ON "audit_tree_cosignature"("size");

-- prisma/sql/functions/audit_tree_enqueue.sql (new function)
-- Marks every new audit entry as not yet in the audit tree (docs/AUDIT.md): one statement-level
-- trigger per INSERT statement on audit_entry, one insert into audit_tree_pending for its rows. This is
-- all the append path pays for the tree: no lock shared between chains, no hashing. SECURITY DEFINER
-- so the application role cannot write the pending set itself. Tables are named with their schema
-- (no SET search_path, as in audit_chain_append).
CREATE OR REPLACE FUNCTION audit_tree_enqueue() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  INSERT INTO public.audit_tree_pending (entry_id) SELECT f.id FROM fresh f;
  RETURN NULL;
END
$$;

-- prisma/sql/functions/audit_tree_integrate.sql (new function)
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

-- The tree is evidence like the trail (A2, A3). Only the sequencer (SECURITY DEFINER, run as the owner)
-- writes leaves, nodes and the pending set; the application role reads them and calls the sequencer.
-- Signed heads and witness cosignatures are inserted by the application role (the signer and the API),
-- never changed: readers verify their signatures, so a planted row proves nothing.
REVOKE ALL ON audit_tree_leaf, audit_tree_node, audit_tree_pending FROM ledger_app;
GRANT SELECT ON audit_tree_leaf, audit_tree_node, audit_tree_pending TO ledger_app;
REVOKE ALL ON audit_tree_head, audit_tree_cosignature FROM ledger_app;
GRANT SELECT, INSERT ON audit_tree_head, audit_tree_cosignature TO ledger_app;
GRANT USAGE, SELECT ON SEQUENCE audit_tree_head_id_seq, audit_tree_cosignature_id_seq TO ledger_app;
REVOKE EXECUTE ON FUNCTION audit_tree_integrate(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION audit_tree_integrate(integer) TO ledger_app;

-- Leaves, nodes, heads and cosignatures are append-only for everyone, the owner included.
CREATE TRIGGER audit_tree_leaf_no_update BEFORE UPDATE OR DELETE ON audit_tree_leaf
FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_tree_leaf_no_truncate BEFORE TRUNCATE ON audit_tree_leaf
FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_tree_node_no_update BEFORE UPDATE OR DELETE ON audit_tree_node
FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_tree_node_no_truncate BEFORE TRUNCATE ON audit_tree_node
FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_tree_head_no_update BEFORE UPDATE OR DELETE ON audit_tree_head
FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_tree_head_no_truncate BEFORE TRUNCATE ON audit_tree_head
FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_tree_cosignature_no_update BEFORE UPDATE OR DELETE ON audit_tree_cosignature
FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
CREATE TRIGGER audit_tree_cosignature_no_truncate BEFORE TRUNCATE ON audit_tree_cosignature
FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();

-- Every new entry waits in audit_tree_pending for the sequencer: one insert per statement.
CREATE TRIGGER audit_entry_tree_enqueue AFTER INSERT ON audit_entry
REFERENCING NEW TABLE AS fresh FOR EACH STATEMENT EXECUTE FUNCTION audit_tree_enqueue();

-- Entries written before the tree existed join it, in id order, at the sequencer's first rounds.
INSERT INTO audit_tree_pending (entry_id) SELECT id FROM audit_entry;
