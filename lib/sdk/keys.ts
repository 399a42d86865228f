// The effect key (K1, K2): built only from stable intent, never from generated content or the clock.
//   v1/<trigger id>/<tool>/<action tag>/<resolved record id>/<target type>/<normalized target>
// Every component is percent-escaped (encodeURIComponent also escapes "/" and "%"), so the split
// back into components is unique and no two different tuples give the same key. The "v1" prefix
// versions the canonical form: a future form gets a new prefix, never a silent change.
// Its one home is the SDK: the conformance check (K4) derives keys on the tool author's machine with
// the very code the server keys with (lib/ledger/keys.ts uses this module), so the two cannot differ.
import { createHash } from 'node:crypto';
import { invalid } from './errors.ts';
import { normalizeRecordId, normalizeTarget, type RecordIdCase, type TargetType } from './normalize.ts';

export const KEY_VERSION = 'v1';

export interface KeyInput {
  /** Event id or scheduled occurrence id of the trigger. */
  triggerId: string;
  /** Tool and action tag as registered in the tool definition. */
  tool: string;
  action: string;
  /** The business record the tool resolved (looked up, not typed by the model); normalized here. */
  recordId: string;
  /** How the tool's record ids compare (its definition's `recordIds`); default exact. */
  recordIds?: RecordIdCase;
  targetType: TargetType;
  /** Exactly one target; normalized here. */
  target: string;
}

const MAX_COMPONENT = 256;
/** Longest canonical key: the key (plus a chain prefix) must fit in a PostgreSQL btree index entry
 *  (about 2,700 bytes, and chains add "refused:effect:") and in the key field of every command (effectRef). Escaping can grow a
 *  component up to nine times, so the component limits alone do not bound it. */
export const MAX_KEY_LENGTH = 2560;
// A lone UTF-16 surrogate cannot be encoded (encodeURIComponent throws URIError) or stored as UTF-8.
const LONE_SURROGATE = /\p{Cs}/u;

function component(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid(name, `${name} is required`);
  // A blank record id is no resolved record: refuse it rather than key on whitespace.
  if (value.trim().length === 0) throw invalid(name, `${name} must not be blank`);
  if (value.length > MAX_COMPONENT) throw invalid(name, `${name} is longer than ${MAX_COMPONENT} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalid(name, `${name} contains control characters`);
  if (LONE_SURROGATE.test(value)) throw invalid(name, `${name} is not well-formed Unicode (lone surrogate)`);
  return encodeURIComponent(value.normalize('NFC'));
}

export interface DerivedKey {
  key: string;
  target: string;
  /** The record id as keyed (normalizeRecordId): what is stored with the key. */
  recordId: string;
}

export function deriveKey(input: KeyInput): DerivedKey {
  const target = normalizeTarget(input.targetType, input.target);
  // Before the component checks: a format character or surrounding whitespace in a record id is
  // refused or dropped exactly as in a target (K3), not escaped into a second key.
  const recordId = normalizeRecordId(input.recordId, input.recordIds);
  const parts = {
    triggerId: component('triggerId', input.triggerId),
    tool: component('tool', input.tool),
    action: component('action', input.action),
    recordId: component('recordId', recordId),
    target: encodeURIComponent(target),
  };
  const key = [
    KEY_VERSION,
    parts.triggerId,
    parts.tool,
    parts.action,
    parts.recordId,
    input.targetType,
    parts.target,
  ].join('/');
  if (key.length > MAX_KEY_LENGTH) {
    const [longest] = Object.entries(parts).sort((a, b) => b[1].length - a[1].length)[0]!;
    throw invalid(
      longest,
      `the effect key would be ${key.length} characters once escaped (at most ${MAX_KEY_LENGTH}): shorten ${longest}`,
    );
  }
  return { key, target, recordId };
}

/** The components of a key, for display and tests. */
export function parseKey(key: string): Omit<KeyInput, 'target'> & { target: string; version: string } {
  const parts = key.split('/');
  if (parts.length !== 7 || parts[0] !== KEY_VERSION) throw invalid('key', 'not a v1 effect key');
  let decoded: string[];
  try {
    decoded = parts.map((p, i) => (i === 0 || i === 5 ? p : decodeURIComponent(p)));
  } catch {
    throw invalid('key', 'not a v1 effect key: a component is not validly escaped');
  }
  const [version, triggerId, tool, action, recordId, targetType, target] = decoded;
  return {
    version: version!,
    triggerId: triggerId!,
    tool: tool!,
    action: action!,
    recordId: recordId!,
    targetType: targetType as TargetType,
    target: target!,
  };
}

/** Provider idempotency key for (key, epoch) (R2); the database computes the same (ledger_idempotency_key). */
export function providerIdempotencyKey(key: string, epoch: number): string {
  return `el1-${createHash('sha256').update(`${key}\n${epoch}`, 'utf8').digest('hex').slice(0, 40)}`;
}
