// R2: webhook signing secrets are refused where they are configured unless a Standard Webhooks
// receiver can verify with them ("whsec_" + base64 of 24 to 64 bytes).
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { env, resetEnvCache } from '@/lib/env.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { signStandardWebhook } from '@/lib/providers/webhook/index.ts';
import { generateWebhookSecret, webhookSecretProblem } from '@/lib/providers/webhook/secret.ts';

const b64 = (n: number) => Buffer.alloc(n, 7).toString('base64');
const hooks = { hooks: { type: 'webhook', allowedHosts: { notify_partner: ['hooks.partner.example'] } } };

describe('R2: webhook signing secrets', () => {
  afterEach(() => {
    delete process.env.WEBHOOK_SIGNING_SECRET;
    resetEnvCache();
  });

  it.each([
    [b64(32), 'no whsec_ prefix'],
    ['whsec_', 'empty key'],
    ['whsec_not base64!', 'not base64'],
    [`whsec_${b64(32).slice(0, -1)}`, 'base64 with its padding cut'],
    [`whsec_${b64(16)}`, '16 bytes: too short'],
    [`whsec_${b64(23)}`, '23 bytes: too short'],
    [`whsec_${b64(65)}`, '65 bytes: too long'],
    ['my-shared-secret', 'a password'],
  ])('R2: %j (%s) is refused with a reason', (secret) => {
    const problem = webhookSecretProblem(secret);
    expect(problem).toMatch(/whsec_|base64|bytes/);
    expect(() => new ProviderRegistry(hooks, { webhookSecret: secret })).toThrow(/webhook providers hooks/);
    process.env.WEBHOOK_SIGNING_SECRET = secret;
    resetEnvCache();
    expect(() => env()).toThrow(/WEBHOOK_SIGNING_SECRET/);
  });

  it.each([24, 32, 64])('R2: whsec_ + base64 of %i bytes is accepted by the environment and the registry', (n) => {
    const secret = `whsec_${b64(n)}`;
    expect(webhookSecretProblem(secret)).toBeNull();
    expect(() => new ProviderRegistry(hooks, { webhookSecret: secret }).get('hooks')).not.toThrow();
    process.env.WEBHOOK_SIGNING_SECRET = secret;
    resetEnvCache();
    expect(env().WEBHOOK_SIGNING_SECRET).toBe(secret);
  });

  it('R2: a generated secret is valid, unique, and what we sign with verifies with the standardwebhooks library', () => {
    const secret = generateWebhookSecret();
    expect(webhookSecretProblem(secret)).toBeNull();
    expect(generateWebhookSecret()).not.toBe(secret);
    const body = JSON.stringify({ type: 'notify_partner.order_paid', data: { n: 1 } });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'el1-0123',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook(secret, 'el1-0123', timestamp, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('R2: endpoints are host names or IPs with an optional port: a URL, a path or a wildcard is refused in configuration', () => {
    const secret = generateWebhookSecret();
    for (const bad of ['https://hooks.example.com', 'hooks.example.com/path', '*.example.com', 'a b.example.com'])
      expect(
        () => new ProviderRegistry({ h: { type: 'webhook', allowedHosts: { t: [bad] } } }, { webhookSecret: secret }),
      ).toThrow(/allowed host/);
    for (const good of ['hooks.example.com', '127.0.0.1:8080', '[::1]:9000', 'Hooks.Example.com'])
      expect(
        () => new ProviderRegistry({ h: { type: 'webhook', allowedHosts: { t: [good] } } }, { webhookSecret: secret }),
      ).not.toThrow();
  });
});
