// A seeded generator of malformed input for the bad-input proof part. Given a valid input (a template)
// and its zod schema, it mutates exactly one thing (a field's type or value, a missing field, an extra
// field, the top-level shape, or the raw JSON text) and keeps only what the schema refuses, so every
// case sent is really malformed and knows which field the error has to name.
import type { z } from 'zod';

export const SQL_INJECTION = [
  `' OR '1'='1`,
  `'; DROP TABLE effect; --`,
  `1; DELETE FROM audit_entry; --`,
  `" OR 1=1 --`,
  `' UNION SELECT password_hash FROM app_user --`,
  `$$; TRUNCATE audit_entry CASCADE; $$`,
  `\\'; UPDATE effect SET state='done'; --`,
  `admin'--`,
  `1' AND pg_sleep(5)--`,
  `%' OR action LIKE '%`,
];
export const HTML_INJECTION = [
  `<script>alert(1)</script>`,
  `<img src=x onerror=alert(1)>`,
  `"><svg onload=alert(1)>`,
  `javascript:alert(1)`,
  `</textarea><script>alert(document.cookie)</script>`,
  `<iframe srcdoc="<script>alert(1)</script>">`,
  `{{constructor.constructor('alert(1)')()}}`,
  `<a href="javascript:alert(1)">x</a>`,
];
export const UNICODE_EDGES = [
  '\uD800',
  '\uDFFF',
  'a\uD83D',
  'b\uDE00c',
  '\u0000',
  'x\u0000y',
  '\u202Eevil\u202C.exe',
  'e\u0301\u0301\u0301\u0301',
  '😀👩‍👩‍👧‍👦🏳️‍🌈',
  '\uFEFF',
  '\u200B\u200C\u200D',
  'Z̷̧͍a̸͓l̴͕g̶͚o̵̬',
  '\uFFFF\uFFFE',
  'İıſK',
  '\u0085\u2028\u2029',
  'ﷺ'.repeat(40),
  '\u{10FFFF}',
  ' \t\r\n ',
];
export const HUGE_STRINGS = ['x'.repeat(5_000), 'é'.repeat(70_000), '😀'.repeat(30_000), 'A'.repeat(300_000)];
export const INVALID_EMAILS = [
  'no-at-sign',
  '@example.com',
  'a@',
  'a@@b.com',
  'a b@example.com',
  'anna@-bad-.com',
  'a@b',
  'x@example..com',
  '<a>@example.com',
  `${'l'.repeat(65)}@example.com`,
  `a@${'d'.repeat(260)}.com`,
  'a@exa mple.com',
  '"quoted"@',
  'a@\u0000.com',
  'a@\uD800.com',
  "'; DROP TABLE effect;--@x",
  '<script>@example.com',
  'a@.com',
  'a@com.',
  'a@[300.1.1.1]',
];
export const INVALID_PHONES = [
  '12345',
  '+',
  '+1',
  '+12',
  '0049 151',
  '+49-abc-123',
  '+1234567890123456789',
  'tel:+4915112345678x',
  '++4915112345678',
  '+٤٩١٥١١٢٣٤٥٦٧٨',
  '+49\u0000151',
];
export const INVALID_URLS = [
  'not a url',
  '/relative/path',
  'ftp://example.com/file',
  'javascript:alert(1)',
  'http://',
  'https://user:pw@example.com/',
  'file:///etc/passwd',
  'http://exa mple.com',
  'https://-bad-.com',
  'data:text/html,<script>alert(1)</script>',
  'mailto:a@example.com',
  'http://[::1',
];
export const BAD_NUMBERS: unknown[] = [
  -1,
  -0.5,
  1.5,
  0,
  1e308,
  -1e308,
  2 ** 53 + 2,
  2 ** 31,
  -(2 ** 31) - 1,
  '1',
  '1e309',
  'NaN',
  'Infinity',
  '0x10',
];
export const WRONG_TYPES: unknown[] = [
  null,
  true,
  false,
  0,
  42,
  [],
  {},
  [1, 2],
  { nested: 1 },
  { $gt: '' },
  ['a', { b: 1 }],
  '',
  '   ',
];
export const EXTRA_KEYS = [
  'subject',
  'body',
  '__proto__',
  'constructor',
  'prototype',
  'key',
  'epoch2',
  'role',
  'isAdmin',
  'state',
  'x'.repeat(300),
  '\u202Eadmin',
];
export const RAW_MALFORMED = [
  '{',
  '{"a":',
  "{'a':1}",
  '{"a":1,}',
  '[1,2',
  'not json',
  '\uFEFF{}x',
  'NaN',
  '{"a":NaN}',
  '{"a":undefined}',
  '{"a":01}',
  '\u0000',
  '{"a":"\\ud800"',
  '"unterminated',
  '}{',
  '{"a":1}{"b":2}',
  '['.repeat(5000),
  '{"a":' + '['.repeat(3000),
  '\\',
  '{"__proto__":}',
];
export const TOP_LEVEL: unknown[] = [null, [], 'text', 42, true, [{}], '<script>alert(1)</script>'];

export type InvalidTarget = 'email' | 'phone' | 'url';
export const invalidTargets = (type: InvalidTarget) =>
  type === 'email' ? INVALID_EMAILS : type === 'phone' ? INVALID_PHONES : INVALID_URLS;

export interface GeneratedCase {
  /** The input (an object for server actions; JSON text for HTTP bodies, see `raw`). */
  value: unknown;
  /** Raw body text when the case is about the JSON itself. */
  raw?: string;
  /** What was done, for the report ("items.0.target = 'a@@b.com'"). */
  label: string;
  /** The field the error must name (dot path; 'body' for the whole input). */
  field: string;
  kind: 'type' | 'missing' | 'extra' | 'huge' | 'unicode' | 'sql' | 'html' | 'target' | 'number' | 'top' | 'json';
}

type Path = (string | number)[];

/** Every leaf and object path of a template ('items.0.target', 'items.0', 'items', ...). */
export function paths(value: unknown, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return prefix.length ? [prefix] : [];
  const out: Path[] = prefix.length ? [prefix] : [];
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value))
    out.push(...paths(v, [...prefix, k]));
  return out;
}

function setAt(value: unknown, path: Path, next: unknown, remove = false): unknown {
  if (path.length === 0) return next;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && remove) copy.splice(head as number, 1);
    else copy[head as number] = setAt(copy[head as number], rest, next, remove);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && remove) delete copy[head as string];
  else copy[head as string] = setAt(copy[head as string], rest, next, remove);
  return copy;
}

function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value && typeof value === 'object')
    return Object.entries(value).some(([k, v]) => k.includes('\u0000') || containsNul(v));
  return false;
}

/** Whether the product's schema refuses the input (or it holds a NUL, which the product refuses at the door). */
export function refusedBySchema(schema: z.ZodType, value: unknown): boolean {
  return containsNul(value) || !schema.safeParse(value).success;
}

export interface GeneratorSpec {
  template: Record<string, unknown>;
  schema: z.ZodType;
  /** Fields holding a target of this type get invalid targets too (checked by the caller as "semantic"). */
  targetFields?: Record<string, InvalidTarget>;
  /** Whether raw JSON text cases apply (HTTP bodies). */
  json?: boolean;
}

/**
 * `count` schema-refused cases for one input, drawn deterministically from `random`. Gives up after
 * 50x as many draws (an input with few ways to be wrong, e.g. an empty object, yields fewer).
 */
export function generateCases(spec: GeneratorSpec, count: number, random: () => number): GeneratedCase[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const all = paths(spec.template);
  const out: GeneratedCase[] = [];
  const seen = new Set<string>();
  for (let draws = 0; out.length < count && draws < count * 50; draws++) {
    const r = random();
    let c: GeneratedCase;
    const path = all.length ? pick(all) : [];
    const dot = path.map(String).join('.');
    const field = dot || 'body';
    if (r < 0.05 && spec.json) {
      const raw = pick(RAW_MALFORMED);
      c = { value: undefined, raw, label: `raw JSON ${JSON.stringify(raw.slice(0, 24))}`, field: 'body', kind: 'json' };
    } else if (r < 0.09) {
      const v = pick(TOP_LEVEL);
      c = { value: v, label: `whole input = ${JSON.stringify(v)}`, field: 'body', kind: 'top' };
    } else if (r < 0.17 && all.length) {
      c = { value: setAt(spec.template, path, undefined, true), label: `missing ${dot}`, field, kind: 'missing' };
    } else if (r < 0.25) {
      const holder = all.filter((p) => {
        const v = p.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k as string], spec.template);
        return v && typeof v === 'object' && !Array.isArray(v);
      });
      const at = holder.length && random() < 0.3 ? pick(holder) : [];
      const key = pick(EXTRA_KEYS);
      const base = at.length
        ? at.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k as string], spec.template)
        : spec.template;
      const withExtra = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
      Object.defineProperty(withExtra, key, {
        value: pick([...SQL_INJECTION, ...HTML_INJECTION, 'Welcome!']),
        enumerable: true,
        configurable: true,
        writable: true,
      });
      const value = at.length ? setAt(spec.template, at, withExtra) : withExtra;
      c = {
        value,
        label: `extra ${[...at, key.slice(0, 20)].join('.')}`,
        field: [...at, key].map(String).join('.'),
        kind: 'extra',
      };
    } else if (r < 0.4 && all.length) {
      const v = pick(WRONG_TYPES);
      c = { value: setAt(spec.template, path, v), label: `${dot} = ${JSON.stringify(v)}`, field, kind: 'type' };
    } else if (r < 0.5 && all.length) {
      const v = pick(BAD_NUMBERS);
      c = { value: setAt(spec.template, path, v), label: `${dot} = ${JSON.stringify(v)}`, field, kind: 'number' };
    } else if (r < 0.6 && all.length) {
      const v = pick(HUGE_STRINGS);
      c = { value: setAt(spec.template, path, v), label: `${dot} = ${v.length}-char string`, field, kind: 'huge' };
    } else if (r < 0.72 && all.length) {
      const v = pick(UNICODE_EDGES);
      c = { value: setAt(spec.template, path, v), label: `${dot} = ${JSON.stringify(v)}`, field, kind: 'unicode' };
    } else if (r < 0.82 && all.length) {
      const v = pick(SQL_INJECTION);
      c = { value: setAt(spec.template, path, v), label: `${dot} = ${JSON.stringify(v)}`, field, kind: 'sql' };
    } else if (r < 0.92 && all.length) {
      const v = pick(HTML_INJECTION);
      c = { value: setAt(spec.template, path, v), label: `${dot} = ${JSON.stringify(v)}`, field, kind: 'html' };
    } else {
      const targets = Object.entries(spec.targetFields ?? {});
      if (!targets.length) continue;
      const [f, type] = pick(targets);
      const v = pick(invalidTargets(type));
      // Target cases are kept even when the schema accepts them: the product's normalization refuses them (K3).
      const tpath = f.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
      out.push({
        value: setAt(spec.template, tpath, v),
        label: `${f} = ${JSON.stringify(v)}`,
        field: f,
        kind: 'target',
      });
      continue;
    }
    const sig = c.raw ?? JSON.stringify(c.value) ?? 'undefined';
    if (seen.has(sig) && random() < 0.8) continue;
    const malformed =
      c.raw !== undefined
        ? isBadJson(c.raw) || refusedBySchema(spec.schema, JSON.parse(c.raw))
        : refusedBySchema(spec.schema, c.value === undefined ? {} : c.value);
    if (!malformed) continue;
    seen.add(sig);
    out.push(c);
  }
  return out;
}

function isBadJson(raw: string): boolean {
  if (raw.trim() === '') return false;
  try {
    JSON.parse(raw);
    return false;
  } catch {
    return true;
  }
}

/** Whether an error's field names the mutated one (same path, or one inside the other). */
export function namesField(expected: string, got: unknown): boolean {
  if (typeof got !== 'string' || !got) return false;
  if (expected === 'body') return true;
  return got === expected || got.startsWith(`${expected}.`) || expected.startsWith(`${got}.`);
}
