// The demo agent: a 100-recipient welcome campaign through the SDK against the sandbox provider,
// with the mishaps of the seed discussion: one provider reject (failed), one 5xx after the message
// went out (unknown), and the process dying right after the provider accepted recipient 40 (pending
// until its lease runs out). Recipients 41-100 are approved but never sent. `npm start` seeds the
// database with it so the console opens on a crashed run worth looking at.
import type { Provider } from '../providers/types.ts';
import { SandboxProvider } from '../sdk/sandbox.ts';
import { startSandbox, type FailureMode, type Sandbox } from '../providers/sandbox/server.ts';
import { createLedger, type EffectResult } from '../sdk/client.ts';
import { defineTool } from '../sdk/tools.ts';
import type { PlanSubmitted, Transport } from '../sdk/types.ts';

export const DEMO_WORKFLOW = 'welcome-campaign';
export const DEMO_TRIGGER = 'demo:welcome-campaign:2026-11';
export const DEMO_TOOL = {
  name: 'send_welcome_email',
  actions: ['campaign_welcome'],
  targetType: 'email' as const,
  provider: 'sandbox',
  generatedInputs: ['subject', 'body'],
  supportsIdempotencyKey: true,
  supportsReceiptLookup: true,
  settleWindowSeconds: 60,
  leaseSeconds: 300,
};

export interface Recipient extends Record<string, unknown> {
  customerId: string;
  email: string;
  name: string;
  subject: string;
  body: string;
}

/** The demo tool as the SDK sees it: identity is the customer record the tool looks up in its
 *  directory (demoCustomer) and that customer's address, never the text or the model's spelling. */
export const welcomeEmail = defineTool({
  name: DEMO_TOOL.name,
  action: 'campaign_welcome',
  targetType: 'email',
  generated: ['subject', 'body'],
  resolve: (r: Recipient) => {
    const customer = demoCustomer(r.customerId);
    return { record: customer.customerId, target: customer.email };
  },
});

const FIRST = [
  'Anna',
  'Ben',
  'Chloe',
  'David',
  'Elif',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kaja',
  'Luis',
  'Mia',
  'Noah',
  'Olga',
  'Pavel',
  'Quinn',
  'Rosa',
  'Sami',
  'Tara',
];
const LAST = ['Schmidt', 'Okafor', 'Nguyen', 'Rossi', 'Yilmaz'];

/** 100 deterministic recipients; #1 is Anna, the customer of the seed discussion. */
export function demoRecipients(n = 100): Recipient[] {
  return Array.from({ length: n }, (_, i) => demoRecipient(i));
}

/** The demo's customer directory: the customer a typed id names, compared as a CRM compares ids
 *  (case, surrounding space and width do not matter), or an error when it names none. */
export function demoCustomer(typed: string): Recipient {
  const match = /^cust-(\d{4})$/.exec(typed.normalize('NFKC').trim().toLowerCase());
  const n = match ? Number(match[1]) : 0;
  if (n < 1) throw new Error(`no demo customer ${JSON.stringify(typed)}`);
  return demoRecipient(n - 1);
}

function demoRecipient(i: number): Recipient {
  const first = FIRST[i % FIRST.length]!;
  const last = LAST[Math.floor(i / FIRST.length) % LAST.length]!;
  const name = `${first} ${last}`;
  return {
    customerId: `cust-${String(i + 1).padStart(4, '0')}`,
    email: `${first}.${last}${i >= FIRST.length * LAST.length ? i : ''}@example.com`.toLowerCase(),
    name,
    // Model-written text: it goes to the provider, never into the key.
    subject: `Welcome to Acme, ${first}!`,
    body: `Hi ${first},\n\nthanks for joining Acme. Your workspace is ready.\n\nThe Acme team`,
  };
}

export interface DemoCampaignOptions {
  /** The SDK transport: directTransport({ db, actor }) or httpTransport({ baseUrl, runtimeKey }). */
  transport: Transport;
  /** Sandbox base URL to send through; omitted: an in-process sandbox is started and stopped. */
  sandboxUrl?: string;
  workflow?: string;
  triggerId?: string;
  recipients?: number;
  /** 1-based recipient after whose provider call the process dies. Default 40. */
  crashAt?: number;
  /** 1-based recipient the provider rejects (4xx). Default 13. */
  rejectAt?: number;
  /** 1-based recipient whose send ends in a 5xx after the message went out. Default 27. */
  unknownAt?: number;
  /** Called after the plan is submitted, before anything is sent (e.g. an operator approves it). */
  approve?: (plan: PlanSubmitted) => Promise<void>;
  log?: (line: string) => void;
}

export interface DemoCampaignResult {
  runId: string;
  planId: string;
  workflow: string;
  triggerId: string;
  outcomes: Record<'done' | 'failed' | 'unknown' | 'stuck' | 'skipped', number>;
  /** The recipient whose provider call happened just before the crash (pending until its lease). */
  crashedAt: { index: number; email: string } | null;
  /** Recipients never attempted because the process died. */
  notStarted: number;
  /** Messages the sandbox delivered during this call. */
  deliveries: number;
}

class DemoCrash extends Error {
  constructor() {
    super('demo agent process died (simulated crash)');
    this.name = 'DemoCrash';
  }
}

/** After `dead()` turns true every call fails, as if the process had died: nothing more reaches the ledger. */
function crashable(inner: Transport, dead: () => boolean): Transport {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(inner) as [string, (...a: unknown[]) => Promise<unknown>][]) {
    out[name] = async (...args: unknown[]) => {
      if (dead()) throw new DemoCrash();
      return fn(...args);
    };
  }
  return out as unknown as Transport;
}

async function failNext(sandboxUrl: string, mode: FailureMode, to: string): Promise<void> {
  const res = await fetch(`${sandboxUrl}/_sandbox/fail`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode, to }),
  });
  if (!res.ok) throw new Error(`sandbox refused failure mode ${mode}: ${res.status}`);
}

export async function runDemoCampaign(options: DemoCampaignOptions): Promise<DemoCampaignResult> {
  const log = options.log ?? (() => undefined);
  const crashAt = options.crashAt ?? 40;
  const rejectAt = options.rejectAt ?? 13;
  const unknownAt = options.unknownAt ?? 27;
  const workflow = options.workflow ?? DEMO_WORKFLOW;
  const triggerId = options.triggerId ?? DEMO_TRIGGER;
  const recipients = demoRecipients(options.recipients ?? 100);
  let own: Sandbox | undefined;
  const sandboxUrl = options.sandboxUrl ?? (own = await startSandbox()).url;
  try {
    const provider: Provider = new SandboxProvider(sandboxUrl);
    const before = await deliveredCount(sandboxUrl);
    let dead = false;
    const ledger = createLedger(crashable(options.transport, () => dead));
    const run = await ledger.createRun({ workflow, triggerId });
    const plan = await ledger.submitPlan(
      run.runId,
      recipients.map((r) => ({
        tool: welcomeEmail.name,
        action: welcomeEmail.action,
        recordId: r.customerId,
        target: r.email,
      })),
    );
    log(`demo: run ${run.runId}, plan ${plan.planId} with ${plan.itemCount} recipients`);
    if (options.approve) await options.approve(plan);

    const outcomes: DemoCampaignResult['outcomes'] = { done: 0, failed: 0, unknown: 0, stuck: 0, skipped: 0 };
    let crashedAt: DemoCampaignResult['crashedAt'] = null;
    let attempted = 0;
    for (const [i, r] of recipients.entries()) {
      const n = i + 1;
      if (n === rejectAt) await failNext(sandboxUrl, 'reject', r.email);
      if (n === unknownAt) await failNext(sandboxUrl, 'server_error_after_send', r.email);
      attempted = n;
      let result: EffectResult;
      try {
        result = await ledger.tool(
          welcomeEmail,
          run.runId,
          r,
          async ({ idempotencyKey, key, epoch, signal, args }) => {
            const raw = await provider.send(
              { key, epoch, idempotencyKey, target: args.email, payload: { subject: args.subject, body: args.body } },
              signal,
            );
            if (n === crashAt) dead = true; // the process dies between the provider's answer and the receipt
            return raw;
          },
          { provider, timeoutMs: 10_000 },
        );
      } catch (error) {
        if (!(error instanceof DemoCrash)) throw error;
        crashedAt = { index: n, email: r.email };
        log(
          `demo: the agent died after sending to recipient ${n} (${r.email}); ${recipients.length - n} never attempted`,
        );
        break;
      }
      outcomes[result.status] += 1;
    }
    return {
      runId: run.runId,
      planId: plan.planId,
      workflow,
      triggerId,
      outcomes,
      crashedAt,
      notStarted: recipients.length - attempted,
      deliveries: (await deliveredCount(sandboxUrl)) - before,
    };
  } finally {
    await own?.stop();
  }
}

async function deliveredCount(sandboxUrl: string): Promise<number> {
  const res = await fetch(`${sandboxUrl}/_sandbox/deliveries`);
  const body = (await res.json()) as { deliveries: unknown[] };
  return body.deliveries.length;
}
