// The demo agent that seeds `npm start`: 100 recipients, one reject, one unknown, dies at recipient 40.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoTool, runDemoCampaign, seedDemoCampaign, DEMO_WORKFLOW } from '@/lib/demo/index.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { createLedger, httpTransport } from '@/lib/sdk/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { BASE, makeKey, routeFetch, useApiDb } from './api-support.ts';

let t: TestDatabase;
let sandbox: Sandbox;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

describe('demo campaign', () => {
  it('P3, P4, F6: the seeded campaign is a crashed run worth looking at: 37 done, 1 failed, 1 unknown, 1 pending (the crash), 60 never sent; replay refused', async () => {
    const operator = userActor('operator') as Extract<ReturnType<typeof userActor>, { kind: 'user' }>;
    const result = await seedDemoCampaign({ db: t.db, approver: operator, sandboxUrl: sandbox.url });
    expect(result.outcomes).toEqual({ done: 37, failed: 1, unknown: 1, stuck: 0, skipped: 0 });
    expect(result.crashedAt).toEqual({ index: 40, email: expect.stringContaining('@example.com') });
    expect(result.notStarted).toBe(60);
    expect(result.deliveries).toBe(39);
    expect(result.runtimeKey.token).toMatch(/^elk_/);
    const ledger = createLedger(
      httpTransport({ baseUrl: BASE, runtimeKey: result.runtimeKey.token, fetch: routeFetch }),
    );
    const view = await ledger.readRun(result.runId);
    expect(view.plan).toMatchObject({ status: 'approved', itemCount: 100 });
    expect(view.run.status).toBe('crashed');
    expect(view.counts).toMatchObject({ total: 100, done: 37, failed: 1, unknown: 1, pending: 1, not_started: 60 });
    expect(view.headline).toMatchObject({ done: 37, approved: 100 });
    expect(view.targets[0]).toMatchObject({ target: 'anna.schmidt@example.com', state: 'done' });
    expect(view.targets[39]).toMatchObject({ state: 'pending', leaseExpired: false });
    const replay = await ledger.replay(result.runId);
    expect(replay.status).toBe(409);
    // Every delivery went to a distinct recipient exactly once.
    const perRecipient = new Map<string, number>();
    for (const d of sandbox.deliveries) perRecipient.set(d.to, (perRecipient.get(d.to) ?? 0) + 1);
    expect([...perRecipient.values()].every((n) => n === 1)).toBe(true);
  });

  it('the same campaign runs over the HTTP transport with a runtime key', async () => {
    await ensureDemoTool(t.db);
    const key = await makeKey(t.db, [DEMO_WORKFLOW]);
    const result = await runDemoCampaign({
      transport: httpTransport({ baseUrl: BASE, runtimeKey: key.token, fetch: routeFetch }),
      triggerId: `demo-${randomUUID()}`,
      recipients: 20,
      crashAt: 15,
      rejectAt: 3,
      unknownAt: 5,
    });
    expect(result.outcomes).toEqual({ done: 12, failed: 1, unknown: 1, stuck: 0, skipped: 0 });
    expect(result.notStarted).toBe(5);
    expect(result.deliveries).toBe(14);
  });
});
