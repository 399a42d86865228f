// Webhook signing secrets in the Standard Webhooks form: "whsec_" followed by the base64 of the HMAC
// key. Receivers verify with the official libraries, which strip the prefix and base64-decode the
// rest; a secret in any other shape (no prefix, not base64, or a key too short to resist guessing)
// signs messages that no receiver can check, so it is refused where it is configured, not at the first
// delivery. One home for the rule: the environment check (lib/env.ts) and the provider both use it.
import { randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Standard Webhooks recommends 24 to 64 bytes of key; shorter keys are refused. */
export const WEBHOOK_SECRET_MIN_BYTES = 24;
export const WEBHOOK_SECRET_MAX_BYTES = 64;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Why `secret` cannot sign Standard Webhooks, or null when it can. */
export function webhookSecretProblem(secret: string): string | null {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX))
    return `a webhook signing secret starts with "${WEBHOOK_SECRET_PREFIX}" followed by base64 (Standard Webhooks)`;
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!encoded || !BASE64.test(encoded))
    return `the part after "${WEBHOOK_SECRET_PREFIX}" is not base64 (A-Z, a-z, 0-9, +, / and = padding)`;
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < WEBHOOK_SECRET_MIN_BYTES)
    return `the webhook signing key is ${bytes} bytes; at least ${WEBHOOK_SECRET_MIN_BYTES} are required`;
  if (bytes > WEBHOOK_SECRET_MAX_BYTES)
    return `the webhook signing key is ${bytes} bytes; at most ${WEBHOOK_SECRET_MAX_BYTES} are accepted`;
  return null;
}

/** The HMAC key of a valid secret; throws with the reason otherwise. */
export function webhookSigningKey(secret: string): Buffer {
  const problem = webhookSecretProblem(secret);
  if (problem) throw new Error(problem);
  return Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
}

/** A fresh secret of 32 random bytes, in the form every Standard Webhooks receiver accepts. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}
