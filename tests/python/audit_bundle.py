"""Checks a signed audit bundle (version 3 of the JSON Lines export) with the standard library only,
written from docs/AUDIT.md ("The export as a signed bundle"): every entry's hash and links
(audit_verify.py), the tree head the bundle was cut at (its log signature and a witness quorum,
audit_tree.py), each entry's leaf (in leaf order; for a bundle of every entry, leaves 0, 1, 2, ...
rebuilding the head's root; otherwise each entry's inclusion proof against the head), the coverage
against what the bundle holds (the summary's flags, the entry count, the filter fields an entry shows),
the root of the exported leaves, the key id and the log's Ed25519 signature over the statement.

python3 audit_bundle.py <bundle.jsonl> --log-key <vkey> [--witness-key <vkey>]... [--quorum <n>]
prints "OK <entries> <tree size> <coverage>" and exits 0, or "BROKEN <line> <problem>" and exits 1."""
import argparse, base64, hashlib, json, sys
from audit_tree import Broken, audit_leaf, ed25519_verify, node, open_head, parse_vkey, verify_inclusion
from audit_verify import jcs, verify as verify_entries

# An Ed25519 public key as X.509 SubjectPublicKeyInfo (DER) is this prefix and the 32 key bytes; a key
# id is the first 16 hex digits of its SHA-256 (docs/AUDIT.md, "Signed checkpoints").
SPKI_ED25519 = bytes.fromhex("302a300506032b6570032100")

def key_id(public): return hashlib.sha256(SPKI_ED25519 + public).hexdigest()[:16]

class Fold:
    """The RFC 9162 root of leaves added one at a time: the complete subtrees along the right edge."""
    def __init__(self): self.edge, self.size = [], 0  # (level, hash)
    def add(self, leaf):
        level, h = 0, leaf
        while self.edge and self.edge[-1][0] == level:
            h = node(self.edge.pop()[1], h); level += 1
        self.edge.append((level, h)); self.size += 1
    def root(self):
        if not self.edge: return hashlib.sha256(b"").digest()
        h = self.edge[-1][1]
        for _, left in reversed(self.edge[:-1]): h = node(left, h)
        return h

def filter_mismatch(f, row):
    """The filter field an entry visibly does not match, or None. Checked: action (its text anywhere in
    the action's name, ASCII case ignored), outcome, run (the whole run id or its leading digits). The
    actor, target and time fields need what an entry does not carry (the database's case folding of
    names, an effect's recipients, how the console read a typed time): the ledger's signature vouches
    for those."""
    action = f.get("action")
    if action is not None and action.isascii() and action.lower() not in row["action"].lower(): return "action"
    if f.get("outcome") in ("ok", "refused") and row["outcome"] != f["outcome"]: return "outcome"
    run = f.get("run")
    if run is not None:
        digits = run.strip().lower().replace("-", "")
        if not (row["run_id"] or "").replace("-", "").startswith(digits): return "run"
    return None

def check(path, log, witnesses=(), quorum=0):
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "": lines.pop()
    if len(lines) < 2: raise Broken("1 not a bundle: a header and a summary at least")
    header = json.loads(lines[0]).get("bundle")
    if not isinstance(header, dict) or header.get("format") != "effect-ledger-audit-bundle" or header.get("version") != 3:
        raise Broken("1 the first line is not a version 3 bundle header")
    coverage = header["coverage"]
    if set(coverage) != {"filter", "workflows"}: raise Broken("1 the coverage names a filter and workflows, nothing else")
    every = coverage["filter"] is None and coverage["workflows"] is None
    try: size, root, _ = open_head([header["head"]], log, witnesses, quorum)
    except (Broken, ValueError) as e: raise Broken(f"1 the bundle's tree head does not verify: {e}")
    fold, last = Fold(), -1
    for no, line in enumerate(lines[1:-1], 2):
        row = json.loads(line)
        leaf = row.get("leaf")
        if not isinstance(leaf, dict) or not isinstance(leaf.get("index"), int) or not isinstance(leaf.get("proof"), list):
            raise Broken(f"{no} the entry has no leaf (index and proof)")
        index, hashed = leaf["index"], audit_leaf(row["hash"])
        fold.add(hashed)
        if index <= last: raise Broken(f"{no} leaf {index} is not after leaf {last}")
        if index >= size: raise Broken(f"{no} leaf {index} is beyond the signed tree of {size} leaves")
        if every and index != last + 1: raise Broken(f"{no} leaves {last + 1} to {index - 1} are missing from a bundle of every entry")
        proof = [base64.b64decode(p, validate=True) for p in leaf["proof"]]
        if not every and not verify_inclusion(index, size, hashed, proof, root):
            raise Broken(f"{no} the entry is not leaf {index} of the signed tree: its inclusion proof does not verify")
        wrong = filter_mismatch(coverage["filter"] or {}, row)
        if wrong: raise Broken(f"{no} the entry does not match the signed filter's {wrong}")
        last = index
    end = len(lines)
    summary = json.loads(lines[-1]).get("export")
    if not isinstance(summary, dict) or summary.get("version") != 3: raise Broken(f"{end} the last line is not a version 3 summary")
    if summary["entries"] != fold.size: raise Broken(f"{end} the summary states {summary['entries']} entries, the file holds {fold.size}")
    if every and (fold.size != size or fold.root() != root):
        raise Broken(f"{end} the bundle covers every entry of the signed tree of {size} leaves but does not rebuild its root")
    if summary.get("scoped") is not (coverage["workflows"] is not None): raise Broken(f"{end} the summary's scoped flag is not the signed coverage's")
    if summary.get("filtered") is not (coverage["filter"] is not None): raise Broken(f"{end} the summary's filtered flag is not the signed coverage's")
    entries_root = base64.b64encode(fold.root()).decode()
    if summary.get("entries_root") != entries_root: raise Broken(f"{end} entries_root is not the root of the entries the file holds")
    if summary.get("key_id") != key_id(log[2]): raise Broken(f"{end} the statement names key {summary.get('key_id')}, not the log's")
    statement = jcs({"format": "effect-ledger-export", "version": 3, "coverage": coverage, "origin": log[0],
                     "tree_size": size, "tree_root": base64.b64encode(root).decode(), "entries": fold.size,
                     "entries_root": entries_root, "signed_at": summary["signed_at"], "key_id": summary["key_id"]})
    if not ed25519_verify(log[2], statement.encode(), base64.b64decode(summary["signature"], validate=True)):
        raise Broken(f"{end} the signed statement does not verify: its coverage, head or entries were changed")
    described = "every entry" if every else " within ".join(
        ([f"the filter {jcs(coverage['filter'])}"] if coverage["filter"] else []) +
        ([f"the workflows {','.join(coverage['workflows'])}"] if coverage["workflows"] else []))
    return fold.size, size, described

def main(argv):
    a = argparse.ArgumentParser()
    a.add_argument("bundle"); a.add_argument("--log-key", required=True)
    a.add_argument("--witness-key", action="append", default=[]); a.add_argument("--quorum", type=int, default=0)
    o = a.parse_args(argv)
    entries = verify_entries(o.bundle)  # hashes and links: "OK <n>" or "BROKEN <line> <id> <problem>"
    try:
        held, size, described = check(o.bundle, parse_vkey(o.log_key), [parse_vkey(k) for k in o.witness_key], o.quorum)
        bundle = None
    except Broken as e:
        bundle = f"BROKEN {e}"
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        bundle = f"BROKEN 1 not a bundle as docs/AUDIT.md describes it: {e!r}"
    # Both broken: the problem on the lowest line, as the TypeScript verifier reports it.
    broken = [b for b in (entries if entries.startswith("BROKEN") else None, bundle) if b]
    if broken:
        print(min(broken, key=lambda b: int(b.split(" ")[1]))); return 1
    print(f"OK {held} {size} {described}"); return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
