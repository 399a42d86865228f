// Plugs the sandbox into the provider registry (lib/providers/registry.ts) as type "sandbox":
//   LEDGER_PROVIDERS='{"sandbox":{"type":"sandbox","url":"http://127.0.0.1:4010"}}'
// Import this module once in a process that builds a ProviderRegistry (the worker).
import { registerProviderType } from '../registry.ts';
import { SandboxProvider } from '@/lib/sdk/sandbox.ts';

registerProviderType('sandbox', (name, settings) => {
  if (typeof settings.url !== 'string' || !settings.url) throw new Error(`provider "${name}": a sandbox needs "url"`);
  const window = settings.idempotencyWindowSeconds;
  return new SandboxProvider(settings.url.replace(/\/+$/, ''), name, {
    idempotencyWindowSeconds: typeof window === 'number' && window >= 0 ? window : undefined,
  });
});
