"""Verifies an Effect Ledger JSON Lines audit export with the standard library only, written from
docs/AUDIT.md alone: canonical form 2 is RFC 8785 (JCS) of the row without "id" and "hash"; form 1
(entries written before form 2) is PostgreSQL's text of a JSON array of the fields in a fixed order;
an entry's hash is sha256(prev_hash + "\\n" + canonical); chains are checked by seq (steps 3 and 4).
Prints "OK <entries>" or "BROKEN <line> <id> <problem>" for the broken entry with the lowest line;
exits 1 on a break."""
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

V1_FIELDS = ("chain", "seq", "prev_hash", "at", "actor_kind", "actor_id", "actor_label", "actor_role", "action",
             "subject_type", "subject_id", "run_id", "before_state", "after_state", "reason", "outcome", "detail",
             "ip", "user_agent", "request_id")

def plain(js):  # a numeric's text as PostgreSQL prints it: the JCS number written without an exponent
    sign, js = ("-", js[1:]) if js.startswith("-") else ("", js)
    m, _, e = js.partition("e")
    if not e: return sign + m
    i, _, f = m.partition("."); digits, point = i + f, len(i) + int(e)
    if point <= 0: return sign + "0." + "0" * -point + digits
    if point >= len(digits): return sign + digits + "0" * (point - len(digits))
    return sign + digits[:point] + "." + digits[point:]

def jsonb(v):  # jsonb's output: ", " and ": ", members by UTF-8 length then bytes, numbers plain
    if v is None or isinstance(v, bool): return json.dumps(v)
    if isinstance(v, (int, float)): return plain(num(v))
    if isinstance(v, str): return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list): return "[" + ", ".join(jsonb(x) for x in v) + "]"
    keys = sorted(v, key=lambda k: (len(k.encode()), k.encode()))
    return "{" + ", ".join(json.dumps(k, ensure_ascii=False) + ": " + jsonb(v[k]) for k in keys) + "}"

def canonical(row):
    if row["version"] == 2: return jcs({k: x for k, x in row.items() if k not in ("id", "hash")})
    return "[" + ", ".join(jsonb(row[f]) if f == "detail" else json.dumps(row[f], ensure_ascii=False) for f in V1_FIELDS) + "]"

def verify(path):
    chains, entries, summary, problems = {}, 0, None, []
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        row = json.loads(line)
        if "export" in row: summary = row["export"]; continue
        if "bundle" in row: continue  # a signed bundle's header: its signatures are audit_tree.py's part
        row.pop("leaf", None)  # a bundle entry's leaf index and proof are not part of its hash
        entries += 1
        if hashlib.sha256((row["prev_hash"] + "\n" + canonical(row)).encode()).hexdigest() != row["hash"]:
            problems.append((no, row["id"], "content does not match its hash"))
        chains.setdefault(row["chain"], []).append((row["seq"], no, row))
    # Steps 3 and 4: an unfiltered export may not skip a seq; one neither filtered nor scoped holds
    # every chain from seq 1 (a summary without "scoped", from an older export, leaves it partial).
    unfiltered = summary is None or not summary.get("filtered")
    whole = summary is not None and summary.get("filtered") is False and summary.get("scoped") is False
    for rows in chains.values():
        rows.sort(key=lambda r: r[0])
        s, no, first = rows[0]
        if s == 1 and first["prev_hash"] != "0" * 64: problems.append((no, first["id"], "not from genesis"))
        if s != 1 and whole: problems.append((no, first["id"], f"the chain starts at seq {s}"))
        for (s0, _, a), (s1, no, b) in zip(rows, rows[1:]):
            if s1 == s0: problems.append((no, b["id"], f"seq {s0} appears twice"))
            elif s1 != s0 + 1 and unfiltered: problems.append((no, b["id"], f"sequence gap after seq {s0}"))
            elif s1 == s0 + 1 and b["prev_hash"] != a["hash"]: problems.append((no, b["id"], "previous hash does not match"))
    if problems:  # the broken entry with the lowest line, as the TypeScript verifier reports it
        no, entry, why = min(problems, key=lambda p: p[0]); return f"BROKEN {no} {entry} {why}"
    return f"OK {entries}"

if __name__ == "__main__":
    result = verify(sys.argv[1]); print(result); sys.exit(0 if result.startswith("OK") else 1)
