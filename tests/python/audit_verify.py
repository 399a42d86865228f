"""Verifies an Effect Ledger JSON Lines audit export with the standard library only, written from
docs/AUDIT.md alone: canonical form 2 is RFC 8785 (JCS) of the row without "id" and "hash"; an
entry's hash is sha256(prev_hash + "\\n" + canonical). Prints "OK <entries>" or
"BROKEN <line> <id> <problem>" for the first broken entry; exits 1 on a break."""
import hashlib, json, math, sys

def num(x):  # ECMAScript Number.prototype.toString of a double
    if isinstance(x, int) and abs(x) < 2**53: return str(x)
    x = float(x)
    if x == 0: return "0"
    r = repr(abs(x)); m, _, e = r.partition("e"); i, _, f = m.partition(".")
    digits = (i + f).lstrip("0"); n = len(i) + int(e or 0) - (len(i + f) - len((i + f).lstrip("0")))
    digits = digits.rstrip("0"); k = len(digits); s = "-" if x < 0 else ""
    if k <= n <= 21: return s + digits + "0" * (n - k)
    if 0 < n <= 21: return s + digits[:n] + "." + digits[n:]
    if -6 < n <= 0: return s + "0." + "0" * -n + digits
    return s + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if n - 1 >= 0 else "-") + str(abs(n - 1))

def jcs(v):
    if v is None or isinstance(v, bool): return json.dumps(v)
    if isinstance(v, (int, float)): return num(v)
    if isinstance(v, str): return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list): return "[" + ",".join(jcs(x) for x in v) + "]"
    keys = sorted(v, key=lambda k: k.encode("utf-16-be"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in keys) + "}"

def verify(path):
    chains, entries = {}, 0
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        row = json.loads(line)
        if "export" in row: continue
        entries += 1
        canonical = jcs({k: x for k, x in row.items() if k not in ("id", "hash")})
        if row["version"] != 2 or hashlib.sha256((row["prev_hash"] + "\n" + canonical).encode()).hexdigest() != row["hash"]:
            return f"BROKEN {no} {row['id']} content does not match its hash"
        chains.setdefault(row["chain"], []).append((row["seq"], no, row))
    for rows in chains.values():
        rows.sort(key=lambda r: r[0])
        for (s0, _, a), (s1, no, b) in zip(rows, rows[1:]):
            if s1 == s0 + 1 and b["prev_hash"] != a["hash"]: return f"BROKEN {no} {b['id']} previous hash does not match"
        if rows[0][0] == 1 and rows[0][2]["prev_hash"] != "0" * 64: return f"BROKEN {rows[0][1]} {rows[0][2]['id']} not from genesis"
    return f"OK {entries}"

if __name__ == "__main__":
    result = verify(sys.argv[1]); print(result); sys.exit(0 if result.startswith("OK") else 1)
