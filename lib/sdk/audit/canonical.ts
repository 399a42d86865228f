// The canonical forms an audit entry's hash covers (A2), outside the database: the same text
// audit_canonical() computes in PostgreSQL (prisma/sql/functions/audit_canonical*.sql), rebuilt from a
// row of the JSON Lines export. Imports only Node built-ins, so the SDK package can ship it as is.
// The algorithm, for reimplementing it elsewhere: docs/AUDIT.md.
import { hash } from 'node:crypto';

/** One entry as the JSON Lines export writes it: every hashed field, plus its id and hash. */
export interface ExportedEntry {
  id: string;
  version: number;
  chain: string;
  seq: number;
  prev_hash: string;
  hash: string;
  at: string;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  actor_role: string | null;
  action: string;
  subject_type: string;
  subject_id: string;
  run_id: string | null;
  before_state: string | null;
  after_state: string | null;
  reason: string | null;
  outcome: string;
  detail: unknown;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}

/** The fields of form 1, in the order of its JSON array. */
const V1_FIELDS = [
  'chain', 'seq', 'prev_hash', 'at', 'actor_kind', 'actor_id', 'actor_label', 'actor_role', 'action',
  'subject_type', 'subject_id', 'run_id', 'before_state', 'after_state', 'reason', 'outcome', 'detail',
  'ip', 'user_agent', 'request_id',
] as const; // prettier-ignore

/** RFC 8785: no whitespace, members sorted by UTF-16 code units (JavaScript's default sort), strings
 *  and numbers exactly as JSON.stringify writes them. */
export function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('JSON has no NaN or Infinity');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + jcs(value[i]);
    return out + ']';
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i ? ',' : ''}${JSON.stringify(keys[i])}:${jcs(object[keys[i]!])}`;
  return out + '}';
}

/** The members form 2 covers (every exported field but id and hash), in JCS order. */
const V2_MEMBERS = [
  'action', 'actor_id', 'actor_kind', 'actor_label', 'actor_role', 'after_state', 'at', 'before_state', 'chain',
  'detail', 'ip', 'outcome', 'prev_hash', 'reason', 'request_id', 'run_id', 'seq', 'subject_id',
  'subject_type', 'user_agent', 'version',
] as const; // prettier-ignore
const V2_PREFIXES = V2_MEMBERS.map((k, i) => `${i ? ',' : '{'}${JSON.stringify(k)}:`);

/** Form 2: the JCS text of the row without its id and hash. */
export function canonicalV2(entry: ExportedEntry): string {
  const { id: _id, hash: _hash, ...fields } = entry;
  return jcs(fields);
}

/**
 * Form 2 of an entry whose members are exactly the export's (lib/sdk/audit/export-input.ts checked
 * its shape; other members, such as a bundle's `leaf`, are not covered by the hash and are skipped):
 * the same text as canonicalV2, written in the fixed order of the member names, so the verifier
 * neither copies nor sorts the row. Values still go through jcs: nothing is taken as already canonical.
 */
export function canonicalV2Shaped(entry: ExportedEntry): string {
  let out = '';
  for (let i = 0; i < V2_MEMBERS.length; i++) out += V2_PREFIXES[i]! + jcs(entry[V2_MEMBERS[i]!]);
  return out + '}';
}

/** Form 1: PostgreSQL's json_build_array text ("[a, b]"), the detail as jsonb prints it (members
 *  ordered by name length, then bytes; ", " and ": " between). Reproducible from an export as long
 *  as the detail's numbers print the same after a round trip through a double (integers do). */
export function canonicalV1(entry: ExportedEntry): string {
  return `[${V1_FIELDS.map((f) => (f === 'detail' ? pgJsonb(entry.detail) : JSON.stringify(entry[f]))).join(', ')}]`;
}

function pgJsonb(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return plainDecimal(JSON.stringify(value));
  if (typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pgJsonb).join(', ')}]`;
  const object = value as Record<string, unknown>;
  const bytes = (s: string) => Buffer.from(s, 'utf8');
  const keys = Object.keys(object).sort(
    (a, b) => bytes(a).length - bytes(b).length || Buffer.compare(bytes(a), bytes(b)),
  );
  return `{${keys.map((k) => `${JSON.stringify(k)}: ${pgJsonb(object[k])}`).join(', ')}}`;
}

/** PostgreSQL prints a numeric without an exponent: "1e-7" is 0.0000001, "1e+21" twenty-two digits. */
function plainDecimal(js: string): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(js);
  if (!m) return js;
  const [, sign, lead, frac = '', exp] = m;
  const digits = lead! + frac;
  const point = 1 + Number(exp);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  return `${sign}${digits.padEnd(point, '0').slice(0, point)}${point < digits.length ? `.${digits.slice(point)}` : ''}`;
}

export function canonicalText(entry: ExportedEntry): string {
  return entry.version === 2 ? canonicalV2(entry) : canonicalV1(entry);
}

/** sha256 hex of the previous hash, a line feed and the canonical text (UTF-8), as audit_hash(). */
export function entryHash(entry: ExportedEntry): string {
  return hash('sha256', `${entry.prev_hash}\n${canonicalText(entry)}`, 'hex');
}

/** entryHash of an entry whose shape the verifier checked (see canonicalV2Shaped). */
export function shapedEntryHash(entry: ExportedEntry): string {
  const text = entry.version === 2 ? canonicalV2Shaped(entry) : canonicalV1(entry);
  return hash('sha256', `${entry.prev_hash}\n${text}`, 'hex');
}

export const GENESIS_HASH = '0'.repeat(64);
