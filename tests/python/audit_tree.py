"""Checks the audit tree's evidence with the standard library only, written from docs/AUDIT.md ("One
tree over the whole trail"): RFC 9162 inclusion and consistency proofs, and C2SP signed notes (the
tlog-checkpoint body, timestamped Ed25519 signatures of tlog-cosignature, verifier keys). Ed25519 is
verified here in plain Python (RFC 8032, section 5.1.7): the standard library has none.

python3 audit_tree.py --head <note>... --log-key <vkey> [--witness-key <vkey>]... [--quorum <n>]
    [--inclusion <proof.json>]... [--since <older note> --consistency <proof.json>]
prints "OK <size> <witnesses> <inclusions>" and exits 0, or "BROKEN <problem>" and exits 1.
python3 audit_tree.py --proofs <file>: checks many proofs against given roots (see check_proofs)."""
import argparse, base64, hashlib, json, struct, sys

# --- Ed25519 (RFC 8032) ---------------------------------------------------------------------------
P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)

def _add(a, b):  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, x*y = T/Z
    x1, y1, z1, t1 = a; x2, y2, z2, t2 = b
    e = (y1 - x1) * (y2 - x2) % P; f = (y1 + x1) * (y2 + x2) % P
    g = 2 * D * t1 * t2 % P; h = 2 * z1 * z2 % P
    e, f, g, h = f - e, h - g, h + g, f + e
    return (e * f % P, g * h % P, f * g % P, e * h % P)

def _mul(s, point):
    q = (0, 1, 1, 0)
    while s:
        if s & 1: q = _add(q, point)
        point = _add(point, point); s >>= 1
    return q

def _decode(b):
    if len(b) != 32: return None
    y = int.from_bytes(b, "little"); sign = y >> 255; y &= (1 << 255) - 1
    if y >= P: return None
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if v * x * x % P == (-u) % P: x = x * SQRT_M1 % P
    elif v * x * x % P != u: return None
    if x == 0 and sign: return None
    if x & 1 != sign: x = P - x
    return (x, y, 1, x * y % P)

def _encode(point):
    x, y, z, _ = point; zi = pow(z, P - 2, P); x, y = x * zi % P, y * zi % P
    return (y | (x & 1) << 255).to_bytes(32, "little")

BASE = _decode((4 * pow(5, P - 2, P) % P).to_bytes(32, "little"))

def ed25519_verify(public, message, signature):
    a, r = _decode(public), _decode(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if a is None or r is None or len(signature) != 64 or s >= L: return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % L
    return _encode(_mul(s, BASE)) == _encode(_add(r, _mul(k, a)))

# --- RFC 9162 -------------------------------------------------------------------------------------
def node(left, right): return hashlib.sha256(b"\x01" + left + right).digest()
def audit_leaf(entry_hash_hex): return hashlib.sha256(b"\x00" + bytes.fromhex(entry_hash_hex)).digest()

def verify_inclusion(index, size, leaf, proof, root):  # 2.1.3.2
    if not 0 <= index < size: return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else: r = node(r, p)
        fn >>= 1; sn >>= 1
    return sn == 0 and r == root

def verify_consistency(first, second, first_root, second_root, proof):  # 2.1.4.2
    if not 0 <= first <= second: return False
    if first == 0: return not proof
    if first == second: return not proof and first_root == second_root
    if not proof: return False
    path = [first_root] + proof if first & (first - 1) == 0 else proof
    fn, sn = first - 1, second - 1
    while fn & 1: fn >>= 1; sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0: return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while not fn & 1 and fn != 0: fn >>= 1; sn >>= 1
        else: sr = node(sr, c)
        fn >>= 1; sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root

# --- C2SP signed notes ----------------------------------------------------------------------------
class Broken(Exception): pass

def parse_vkey(text):  # name+hex key id+base64(0x04 || Ed25519 public key)
    name, key_id, key = text.strip().split("+", 2)
    raw = base64.b64decode(key, validate=True)
    if len(raw) != 33 or raw[0] != 4: raise Broken("the verifier key is not a timestamped Ed25519 key")
    if hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4] != bytes.fromhex(key_id):
        raise Broken("the verifier key id does not match its name and key")
    return name, bytes.fromhex(key_id), raw[1:]

def parse_note(text):
    split = text.rfind("\n\n")
    if split < 0 or not text.endswith("\n"): raise Broken("the note has no blank line before its signatures")
    body, signatures = text[:split + 1], []
    for line in text[split + 2:-1].split("\n"):
        dash, name, encoded = line.split(" ")
        raw = base64.b64decode(encoded, validate=True)
        if dash != "\u2014" or len(raw) < 5: raise Broken("a signature line is malformed")
        signatures.append((name, raw[:4], raw[4:]))
    return body, signatures

def open_head(notes, log, witnesses=(), quorum=0):
    """The head (origin, size, root) of notes with one body, once the log's signature and every line
    of a known key verify and `quorum` witnesses cosigned; names of the witnesses that did."""
    parsed = [parse_note(n) for n in notes]
    body = parsed[0][0]
    if any(b != body for b, _ in parsed): raise Broken("the notes sign different heads")
    origin, size, root, end = body.split("\n")
    if end != "" or not size.isdigit() or (size != "0" and size.startswith("0")): raise Broken("a checkpoint body is origin, size, root")
    root = base64.b64decode(root, validate=True)
    if origin != log[0] or len(root) != 32: raise Broken(f"the head's origin is {origin}, not {log[0]}")
    signed, cosigned = False, set()
    for name, key_id, sig in (s for _, sigs in parsed for s in sigs):
        known = next((k for k in (log, *witnesses) if k[0] == name and k[1] == key_id), None)
        if known is None: continue  # a line of an unknown key is ignored
        time = struct.unpack(">Q", sig[:8])[0] if len(sig) == 72 else -1
        message = f"cosignature/v1\ntime {time}\n{body}".encode()
        if time < 0 or not ed25519_verify(known[2], message, sig[8:]): raise Broken(f"the signature of {name} does not verify")
        if known is log: signed = True
        else: cosigned.add(name)
    if not signed: raise Broken(f"the head carries no signature of {log[0]}")
    if len(cosigned) < quorum: raise Broken(f"{len(cosigned)} of the known witnesses cosigned this head, {quorum} are required")
    return int(size), root, sorted(cosigned)

def check_proofs(path):
    """A file of the API's proofs with the roots they are against (base64):
    {"inclusion": [{leaf_index, tree_size, entry_hash, proof, root}], "consistency": [{from, to, proof,
    from_root, to_root}]}; prints how many verify, and the first that does not."""
    f, b = json.loads(open(path, encoding="utf-8").read()), lambda x: base64.b64decode(x, validate=True)
    for p in f["inclusion"]:
        if not verify_inclusion(p["leaf_index"], p["tree_size"], audit_leaf(p["entry_hash"]), [b(h) for h in p["proof"]], b(p["root"])):
            print(f"BROKEN inclusion of leaf {p['leaf_index']} in {p['tree_size']}"); return 1
    for c in f["consistency"]:
        if not verify_consistency(c["from"], c["to"], b(c["from_root"]), b(c["to_root"]), [b(h) for h in c["proof"]]):
            print(f"BROKEN consistency from {c['from']} to {c['to']}"); return 1
    print(f"OK {len(f['inclusion'])} {len(f['consistency'])}"); return 0

def main(argv):
    if argv[:1] == ["--proofs"]: return check_proofs(argv[1])
    a = argparse.ArgumentParser()
    a.add_argument("--head", action="append", required=True); a.add_argument("--log-key", required=True)
    a.add_argument("--witness-key", action="append", default=[]); a.add_argument("--quorum", type=int, default=0)
    a.add_argument("--inclusion", action="append", default=[]); a.add_argument("--since", action="append")
    a.add_argument("--consistency")
    o = a.parse_args(argv)
    read = lambda f: open(f, encoding="utf-8").read()
    b64 = lambda proof: [base64.b64decode(p, validate=True) for p in proof]
    try:
        log = parse_vkey(o.log_key)
        size, root, cosigned = open_head([read(f) for f in o.head], log, [parse_vkey(k) for k in o.witness_key], o.quorum)
        for f in o.inclusion:
            p = json.loads(read(f))
            if p["tree_size"] != size or not verify_inclusion(p["leaf_index"], size, audit_leaf(p["entry_hash"]), b64(p["proof"]), root):
                raise Broken(f"entry {p['entry_id']} is not in the signed tree")
        if o.since:
            old_size, old_root, _ = open_head([read(f) for f in o.since], log)
            c = json.loads(read(o.consistency)) if o.consistency else {}
            if c.get("from") != old_size or c.get("to") != size: raise Broken(f"a consistency proof from {old_size} to {size} leaves is required")
            if not verify_consistency(old_size, size, old_root, root, b64(c["proof"])):
                raise Broken(f"the head of {size} leaves does not extend the older head of {old_size}")
    except (Broken, ValueError, KeyError) as e:
        print(f"BROKEN {e}"); return 1
    print(f"OK {size} {','.join(cosigned) or '-'} {len(o.inclusion)}"); return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
