// Reading an audit export strictly (docs/AUDIT.md, "What the verifier reads"): lines cut in linear time
// with a stated size limit, UTF-8 decoded fatally (never as U+FFFD), and each line refused unless it is
// I-JSON (RFC 7493, which RFC 8785 assumes): no duplicate member names, no lone surrogates, no number
// beyond a double. Entries and the summary must have the shape the export writes. JSON.parse checks the
// syntax; it keeps the last of duplicate names and reads "\ud800" and 1e400 without complaint, which is
// what the checks here add. Node built-ins only, like the rest of the offline verifier.

/** The longest line the verifier reads, in bytes; a longer one is refused with its line number. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** A line cut short at MAX_LINE_BYTES: what the splitter yields instead of the line. */
export interface OversizedLine {
  oversized: number;
}

/**
 * The lines of an export that arrives in pieces, as `text.split('\n')` would cut them. Pieces are
 * bytes (a file stream without an encoding: each line is then decoded strictly) or text. Each piece
 * is scanned once and a line's pieces are joined once, so a line of any length costs linear time.
 */
export async function* exportLines(
  chunks: AsyncIterable<string | Uint8Array>,
): AsyncGenerator<string | Uint8Array | OversizedLine> {
  let pieces: (string | Uint8Array)[] = [];
  let size = 0;
  const take = (): string | Uint8Array | OversizedLine => {
    const line =
      size > MAX_LINE_BYTES
        ? { oversized: size }
        : pieces.every((p) => typeof p === 'string')
          ? (pieces as string[]).join('')
          : Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
    pieces = [];
    size = 0;
    return line;
  };
  const keep = (piece: string | Uint8Array) => {
    // Past the limit the rest of the line is only counted, not kept.
    size += typeof piece === 'string' ? Buffer.byteLength(piece, 'utf8') : piece.length;
    if (size <= MAX_LINE_BYTES) pieces.push(piece);
  };
  for await (const chunk of chunks) {
    let from = 0;
    for (;;) {
      const at = typeof chunk === 'string' ? chunk.indexOf('\n', from) : chunk.indexOf(0x0a, from);
      if (at < 0) break;
      keep(cut(chunk, from, at));
      yield take();
      from = at + 1;
    }
    if (from < chunk.length) keep(cut(chunk, from, chunk.length));
  }
  yield take();
}

const cut = (chunk: string | Uint8Array, from: number, to: number) =>
  typeof chunk === 'string' ? chunk.slice(from, to) : chunk.subarray(from, to);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A line's text, or why it cannot be read. */
export function lineText(line: string | Uint8Array | OversizedLine): { text: string } | { problem: string } {
  if (typeof line === 'object' && 'oversized' in line)
    return { problem: `the line is longer than ${MAX_LINE_BYTES} bytes, the most the verifier reads` };
  let text: string;
  if (typeof line === 'string') {
    if (Buffer.byteLength(line, 'utf8') > MAX_LINE_BYTES)
      return { problem: `the line is longer than ${MAX_LINE_BYTES} bytes, the most the verifier reads` };
    text = line;
  } else {
    try {
      text = utf8.decode(line);
    } catch {
      return { problem: 'the line is not valid UTF-8' };
    }
  }
  if (text.charCodeAt(0) === 0xfeff) return { problem: 'the line starts with a byte-order mark' };
  return { text };
}

/** Parses one line as I-JSON: the value, or the first reason it is refused. */
export function parseStrict(text: string): { value: unknown } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'not a JSON line' };
  }
  // Each repeated name leaves the parsed value one member short of the names in the text: only then is
  // the text searched for the name (keeping a set of names per object costs more than both counts).
  const scan = scanOutsideStrings(text);
  const duplicate = scan.names === memberCount(value) ? null : duplicateName(text);
  if (duplicate !== null)
    return { problem: `the member name ${JSON.stringify(duplicate)} appears twice in one object` };
  // The parsed value is walked only when the text could hold what JSON.parse lets through: most
  // lines hold no surrogate at all and no number that could pass a double's range.
  if (!scan.bigNumber && !MAYBE_SURROGATE.test(text)) return { value };
  const bad = unsound(value);
  return bad ? { problem: bad } : { value };
}

// A surrogate code unit, raw or escaped (\uD800 to \uDFFF); a match in other text only costs the walk.
const MAYBE_SURROGATE = /[\ud800-\udfff]|\\u[dD][89a-fA-F]/;
/** A lone surrogate (escaped or raw) or a number beyond a double, anywhere in a parsed value. */
function unsound(value: unknown): string | null {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (SURROGATE.test(v) && LONE_SURROGATE.test(v)) return 'a string holds a lone surrogate (not Unicode text)';
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return 'a number is too large for a double';
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (SURROGATE.test(k) && LONE_SURROGATE.test(k))
          return 'a member name holds a lone surrogate (not Unicode text)';
        stack.push(x);
      }
    }
  }
  return null;
}

// With the u flag a surrogate pair is one code point, so \p{Cs} matches only a lone surrogate.
const LONE_SURROGATE = /\p{Cs}/u;
// Any surrogate code unit, paired or not: a cheap first test, since most strings hold none.
const SURROGATE = /[\ud800-\udfff]/;

/** The end of the string whose opening quote is at `start`: the next quote not escaped (preceded by
 *  an even run of backslashes), found with indexOf: most of a line is inside strings. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * What lies outside the strings of a text JSON.parse accepted: how many member names it holds (strings
 * followed by a colon), and whether a number could be beyond a double: one with an exponent (an e
 * after a digit or a point), or a stretch of 300 characters between strings (the largest double is
 * below 1e309, so a number without an exponent needs 309 digits). Only a few characters of a line are
 * outside its strings, so this costs little more than finding the quotes.
 */
function scanOutsideStrings(text: string): { names: number; bigNumber: boolean } {
  let names = 0;
  let bigNumber = false;
  let from = 0; // the first character after the last string
  for (;;) {
    const quote = text.indexOf('"', from);
    const to = quote < 0 ? text.length : quote;
    if (!bigNumber) {
      if (to - from >= 300) bigNumber = true;
      for (let k = from; k < to && !bigNumber; k++) {
        const c = text.charCodeAt(k) | 0x20; // e or E
        const before = text.charCodeAt(k - 1);
        if (c === 0x65 && ((before >= 0x30 && before <= 0x39) || before === 0x2e)) bigNumber = true;
      }
    }
    if (quote < 0) return { names, bigNumber };
    const end = stringEnd(text, quote);
    let next = end + 1;
    while (text.charCodeAt(next) <= 0x20) next++; // JSON whitespace
    if (text.charCodeAt(next) === 0x3a) names++;
    from = end + 1;
  }
}

/** How many members the objects of a parsed value hold, all together. */
function memberCount(value: unknown): number {
  if (!value || typeof value !== 'object') return 0;
  let count = 0;
  if (Array.isArray(value)) for (const v of value) count += memberCount(v);
  else for (const k in value) count += 1 + memberCount((value as Record<string, unknown>)[k]);
  return count;
}

/** The first member name repeated within one object of a text JSON.parse accepted, or null. */
function duplicateName(text: string): string | null {
  const objects: (Set<string> | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b) objects.push(new Set());
    else if (c === 0x5b) objects.push(null);
    else if (c === 0x7d || c === 0x5d) objects.pop();
    else if (c === 0x22) {
      const end = stringEnd(text, i);
      const names = objects[objects.length - 1];
      if (names) {
        let next = end + 1;
        while (text.charCodeAt(next) <= 0x20) next++; // JSON whitespace
        if (text.charCodeAt(next) === 0x3a) {
          // A name without an escape is its own text (the common case, and much cheaper than parsing).
          const raw = text.slice(i + 1, end);
          const name = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
          if (names.has(name)) return name;
          names.add(name);
        }
      }
      i = end;
    }
  }
  return null;
}

const TEXT = [
  'id',
  'chain',
  'at',
  'actor_kind',
  'actor_id',
  'actor_label',
  'action',
  'subject_type',
  'subject_id',
  'outcome',
];
const TEXT_OR_NULL = [
  'actor_role',
  'run_id',
  'before_state',
  'after_state',
  'reason',
  'ip',
  'user_agent',
  'request_id',
];
const HASHES = ['prev_hash', 'hash'];
const ENTRY_MEMBERS = new Set([...TEXT, ...TEXT_OR_NULL, ...HASHES, 'version', 'seq', 'detail']);
const HEX64 = /^[0-9a-f]{64}$/;

const ENTRY_MEMBER_COUNT = ENTRY_MEMBERS.size;

/** Why a parsed line is not an audit entry as the export writes it, or null. `leaf`: a bundle's entry,
 *  which carries its leaf (index and proof, checked by ./bundle.ts) beside the entry's members. */
export function entryShapeProblem(v: unknown, leaf = false): string | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'not an audit entry (not a JSON object)';
  const e = v as Record<string, unknown>;
  // The common case first, with no array built: exactly the members, each as the export writes it.
  let count = 0;
  for (const _member in e) count++;
  if (count === ENTRY_MEMBER_COUNT + (leaf ? 1 : 0) && (!leaf || 'leaf' in e) && wellShaped(e)) return null;
  const missing = [...ENTRY_MEMBERS].filter((k) => !(k in e));
  if (missing.length) return `not an audit entry (${missing.join(', ')} missing)`;
  const extra = Object.keys(e).filter((k) => !ENTRY_MEMBERS.has(k) && !(leaf && k === 'leaf'));
  if (extra.length) return `not an audit entry (unknown member ${extra.join(', ')})`;
  const wrong = [
    ...TEXT.filter((k) => typeof e[k] !== 'string'),
    ...TEXT_OR_NULL.filter((k) => e[k] !== null && typeof e[k] !== 'string'),
    ...HASHES.filter((k) => typeof e[k] !== 'string' || !HEX64.test(e[k])),
    ...(e.version === 1 || e.version === 2 ? [] : ['version']),
    ...(Number.isSafeInteger(e.seq) && (e.seq as number) >= 1 ? [] : ['seq']),
  ];
  return wrong.length ? `not an audit entry (${wrong.join(', ')} not as the export writes it)` : null;
}

/** Every member present and of its type (so, with the count right, no member is unknown). */
function wellShaped(e: Record<string, unknown>): boolean {
  for (const k of TEXT) if (typeof e[k] !== 'string') return false;
  for (const k of TEXT_OR_NULL) if (e[k] !== null && typeof e[k] !== 'string') return false;
  for (const k of HASHES) if (typeof e[k] !== 'string' || !HEX64.test(e[k])) return false;
  return (e.version === 1 || e.version === 2) && Number.isSafeInteger(e.seq) && (e.seq as number) >= 1 && 'detail' in e;
}

/** The members a signed bundle's closing line adds (./bundle.ts). */
const SEAL = ['entries_root', 'signed_at', 'key_id', 'signature'];

/** Why a parsed line with an `export` member is not an export summary, or null. */
export function summaryShapeProblem(v: Record<string, unknown>): string | null {
  const s = v.export as Record<string, unknown> | null;
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  const shaped =
    Object.keys(v).length === 1 &&
    s !== null &&
    typeof s === 'object' &&
    !Array.isArray(s) &&
    s.format === 'effect-ledger-audit' &&
    (s.version === 2 || (s.version === 3 && SEAL.every((k) => typeof s[k] === 'string'))) &&
    typeof s.filtered === 'boolean' &&
    (s.scoped === undefined || typeof s.scoped === 'boolean') &&
    count(s.entries) &&
    !!s.chains &&
    typeof s.chains === 'object' &&
    !Array.isArray(s.chains) &&
    Object.values(s.chains).every(
      (c: unknown) =>
        !!c &&
        typeof c === 'object' &&
        count((c as Record<string, unknown>).first_seq) &&
        count((c as Record<string, unknown>).last_seq) &&
        count((c as Record<string, unknown>).entries),
    );
  return shaped ? null : 'the export summary is not shaped as an effect-ledger-audit summary (docs/AUDIT.md)';
}
