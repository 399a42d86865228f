// The effect key (K1, K2): built only from stable intent, never from generated content or the clock.
//   v1/<trigger id>/<tool>/<action tag>/<resolved record id>/<target type>/<normalized target>
// Every component is percent-escaped (encodeURIComponent also escapes "/" and "%"), so the split
// back into components is unique and no two different tuples give the same key. The "v1" prefix
// versions the canonical form: a future form gets a new prefix, never a silent change.
import { createHash } from 'node:crypto';
import { invalid } from './errors.ts';
import { normalizeTarget, type TargetType } from './normalize.ts';

export const KEY_VERSION = 'v1';

export interface KeyInput {
  /** Event id or scheduled occurrence id of the trigger. */
  triggerId: string;
  /** Tool and action tag as registered in the tool definition. */
  tool: string;
  action: string;
  /** The business record the tool resolved (looked up, not typed by the model). */
  recordId: string;
  targetType: TargetType;
  /** Exactly one target; normalized here. */
  target: string;
}

const MAX_COMPONENT = 256;

function component(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid(name, `${name} is required`);
  if (value.length > MAX_COMPONENT) throw invalid(name, `${name} is longer than ${MAX_COMPONENT} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalid(name, `${name} contains control characters`);
  return encodeURIComponent(value.normalize('NFC'));
}

export interface DerivedKey {
  key: string;
  target: string;
}

export function deriveKey(input: KeyInput): DerivedKey {
  const target = normalizeTarget(input.targetType, input.target);
  const key = [
    KEY_VERSION,
    component('triggerId', input.triggerId),
    component('tool', input.tool),
    component('action', input.action),
    component('recordId', input.recordId),
    input.targetType,
    encodeURIComponent(target),
  ].join('/');
  return { key, target };
}

/** The components of a key, for display and tests. */
export function parseKey(key: string): Omit<KeyInput, 'target'> & { target: string; version: string } {
  const parts = key.split('/');
  if (parts.length !== 7 || parts[0] !== KEY_VERSION) throw invalid('key', 'not a v1 effect key');
  const [version, triggerId, tool, action, recordId, targetType, target] = parts.map((p, i) => (i === 0 || i === 5 ? p : decodeURIComponent(p))) as string[];
  return { version: version!, triggerId: triggerId!, tool: tool!, action: action!, recordId: recordId!, targetType: targetType as TargetType, target: target! };
}

/** Provider idempotency key for (key, epoch) (R2); the database computes the same (ledger_idempotency_key). */
export function providerIdempotencyKey(key: string, epoch: number): string {
  return `el1-${createHash('sha256').update(`${key}\n${epoch}`, 'utf8').digest('hex').slice(0, 40)}`;
}
