// The agent team's own side-effecting tool, as it was before the ledger: send a welcome email through
// the sandbox provider. The boundaries wrap it unchanged; inside a guarded call it passes the claim's
// provider idempotency key (R2). CRASH_AFTER makes it SIGKILL its own process right after the
// provider accepted that recipient, before anything could be reported (a crash half-way through a run).
import { z } from 'zod';
import { currentEffect } from '@/lib/sdk/adapters/guard.ts';
import { defineTool, ProviderRejected } from '@/lib/sdk/index.ts';
import type { SandboxProvider } from '@/lib/sdk/sandbox.ts';

export const welcomeSchema = z.object({
  customerId: z.string().describe('The customer record id, looked up from the CRM'),
  email: z.string().describe('The recipient'),
  subject: z.string().describe('Generated subject line'),
  body: z.string().describe('Generated body'),
});
export type Welcome = z.infer<typeof welcomeSchema>;

/** The team's CRM lookup: customer ids are case- and space-insensitive there and written in any
 *  width (NFKC); the canonical id is lower-case. An id that is not a customer id names no customer. */
export function lookUpCustomerId(typed: string): string {
  const id = typed.normalize('NFKC').trim().toLowerCase();
  if (!/^cust-[a-z0-9-]+$/.test(id)) throw new Error(`no customer ${JSON.stringify(typed)}`);
  return id;
}

export const welcomeDefinition = (name: string) =>
  defineTool({
    name,
    action: 'campaign_welcome',
    targetType: 'email',
    generated: ['subject', 'body'],
    resolve: (c: Welcome) => ({ record: lookUpCustomerId(c.customerId), target: c.email }),
  });

export async function sendWelcome(provider: SandboxProvider, c: Welcome, crashAfter?: string) {
  const { key, epoch, idempotencyKey } = currentEffect();
  const raw = await provider.send({
    key,
    epoch,
    idempotencyKey,
    target: c.email,
    payload: { subject: c.subject, body: c.body },
  });
  if (crashAfter === c.email) process.kill(process.pid, 'SIGKILL');
  const answer = JSON.parse(new TextDecoder().decode(raw.body)) as { id?: string; status?: string };
  if (raw.status >= 400 && raw.status < 500) throw new ProviderRejected(`refused with ${raw.status}`, { answer });
  if (raw.status >= 300 || !answer.id) throw new Error(`the provider answered ${raw.status}`);
  return { id: answer.id, status: answer.status ?? 'accepted', to: c.email };
}

/** A read-only tool: looks a customer up, sends nothing. */
export const lookupSchema = z.object({ customerId: z.string() });
export const lookupCustomer = (c: { customerId: string }) => ({ customerId: c.customerId, plan: 'team' });
