// A2: RFC 8785 number text is the same in PostgreSQL (audit_jcs_number, under the chain trigger and
// audit_verify()) as in ECMAScript's JSON.stringify and in the Python reimplementation, over the whole
// double range: random bit patterns, integers past 2^53, exponents from 1e21, subnormals, and the
// values on a rounding interval's edge (1e23, 4.75e21, 58978286867103860) that float8out alone prints
// with one digit too many. Each batch of 10,000 numbers is one SQL round trip.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 2 });
});

/** A deterministic generator (xorshift128+), so a failure reproduces. */
function generator(seed: number) {
  let a = BigInt(seed) | 1n;
  let b = 0x9e3779b97f4a7c15n;
  const mask = (1n << 64n) - 1n;
  return () => {
    let x = a;
    const y = b;
    a = y;
    x ^= (x << 23n) & mask;
    b = x ^ y ^ (x >> 17n) ^ (y >> 26n);
    return (b + y) & mask;
  };
}

const view = new DataView(new ArrayBuffer(8));
function fromBits(bits: bigint): number {
  view.setBigUint64(0, bits);
  return view.getFloat64(0);
}

/** 110,000 finite doubles: random bit patterns over every exponent, and the ranges that differ. */
function doubles(): number[] {
  const next = generator(20261205);
  const out: number[] = [
    1e23,
    4.75e21,
    58978286867103860,
    1e21,
    1e22,
    999999999999999900000,
    123456789012345680000,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53) - 2,
    2 ** 63,
    2 ** 64,
    2 ** 1023,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    -Number.MIN_VALUE,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    1e-7,
    1.5e-7,
    0.000001,
    1e-6,
    0.1,
    0.2 + 0.1,
    1 / 3,
    5e-324 * 3,
    Number('9007199254740993'),
    1e300,
    1e-300,
  ];
  while (out.length < 60_000) {
    const d = fromBits(next());
    if (Number.isFinite(d)) out.push(d);
  }
  // Integers past 2^53 (every magnitude up to 2^80), where the edge cases live.
  for (let i = 0; i < 20_000; i++) out.push(Number(next() >> BigInt(Number(next() % 11n))) * 2 ** Number(next() % 17n));
  // Subnormals: a random mantissa with a zero exponent.
  for (let i = 0; i < 15_000; i++) out.push(fromBits(next() & 0x800fffffffffffffn));
  // Near the layout limits: 1e21 (exponent form) and 1e-7.
  for (let i = 0; i < 15_000; i++) out.push((Number(next() % 1_000_000n) + 1) * 10 ** (Number(next() % 34n) - 12));
  return out;
}

describe('A2: RFC 8785 numbers in PostgreSQL and in the verifiers', () => {
  const all = doubles();

  it('A2: audit_jcs prints 110,000 doubles exactly as JSON.stringify does (one round trip per 10,000)', async () => {
    expect(all.length).toBeGreaterThanOrEqual(110_000);
    const differ: string[] = [];
    for (let i = 0; i < all.length; i += 10_000) {
      const batch = all.slice(i, i + 10_000);
      const want = JSON.stringify(batch);
      const { rows } = await t.owner<{ got: string }>('SELECT audit_jcs($1::jsonb) AS got', [want]);
      if (rows[0]!.got === want) continue;
      const got = rows[0]!.got.slice(1, -1).split(',');
      batch.forEach((d, k) => {
        if (got[k] !== JSON.stringify(d)) differ.push(`${JSON.stringify(d)} printed ${got[k]}`);
      });
    }
    expect(differ.slice(0, 10)).toEqual([]);
  }, 120_000);

  it('A2: a JSON number written with other digits prints as the double it reads as; too small for a double is 0', async () => {
    const texts = [
      '1E+23', '100000000000000000000000', '0.1000000000000000055511151231257827', '9.999999999999999e22',
      '58978286867103860.0', '-0', '-0.0', '1.0', '1e-400', '-1e-400', '2e-324', '3e-324', '1e+2',
      '2.4703282292062328e-324', '179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
    ]; // prettier-ignore
    const text = `[${texts.join(',')}]`;
    const { rows } = await t.owner<{ got: string }>('SELECT audit_jcs($1::jsonb) AS got', [text]);
    expect(rows[0]!.got).toBe(JSON.stringify(JSON.parse(text)));
    // No double holds it, and RFC 8785 has no text for it: refused rather than hashed as something else.
    await expect(t.owner(`SELECT audit_jcs('[1e400]'::jsonb)`)).rejects.toThrow(/out of range/);
  });

  it('A2: the Python reimplementation prints the same 110,000 doubles as JSON.stringify', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'audit-jcs-number-')), 'doubles.json');
    writeFileSync(file, JSON.stringify(all));
    const py = spawnSync(
      'python3',
      [
        '-c',
        'import json, sys; sys.path.insert(0, "tests/python"); from audit_verify import jcs; ' +
          'sys.stdout.write(jcs(json.load(open(sys.argv[1]))))',
        file,
      ],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    expect(py.stderr).toBe('');
    expect(py.stdout).toBe(JSON.stringify(all));
  }, 60_000);
});
