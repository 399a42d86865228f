// What `npm start` writes into an empty database: the first admin (one-time password) and, for the
// demo, one demo person per role (two operators, so four-eyes approvals can be tried) and the crashed
// 100-recipient welcome campaign run by the demo agent through the SDK against the sandbox provider.
// The demo data goes into the embedded database `npm start` runs itself; into a database named by
// DATABASE_URL only when asked (`npm start -- --seed-demo`), since that one may be anybody's; and
// never under NODE_ENV=production.
import type { Actor } from '../lib/core/actor.ts';
import { appendAudit } from '../lib/audit/append.ts';
import { createDb } from '../lib/db/client.ts';
import { ensureFirstAdmin } from '../lib/auth/bootstrap.ts';
import { generatePassword } from '../lib/auth/password.ts';
import { insertUser } from '../lib/auth/users.ts';
import { seedDemoCampaign } from '../lib/demo/seed.ts';

export interface SeedOptions {
  appUrl: string;
  /** The running sandbox provider the demo agent sends through (receipts stay look-up-able). */
  sandboxUrl?: string;
  log: (line: string) => void;
  /** Also the demo people and campaign (demoSeedWanted); false: the first admin only. */
  demo: boolean;
}

/** Whether `npm start` writes the demo people and campaign into an empty database. */
export function demoSeedWanted(o: { embedded: boolean; asked: boolean; production: boolean }): boolean {
  return !o.production && (o.embedded || o.asked);
}

export interface SeedResult {
  admin: { email: string; password: string } | null;
  demoPassword: string | null;
  demoUsers: { email: string; role: string }[];
}

const DEMO_PEOPLE = [
  { email: 'olivia.operator@demo.test', name: 'Olivia (operator)', role: 'operator' },
  { email: 'omar.operator@demo.test', name: 'Omar (operator)', role: 'operator' },
  { email: 'sam.support@demo.test', name: 'Sam (support)', role: 'support' },
  { email: 'ada.auditor@demo.test', name: 'Ada (auditor)', role: 'auditor' },
] as const;

const SEED: Actor = { kind: 'system', id: 'seed', label: 'demo seed' };

export async function seedIfEmpty(options: SeedOptions): Promise<SeedResult> {
  const db = createDb(options.appUrl, 4);
  try {
    const admin = await ensureFirstAdmin(db);
    if (!options.demo || (await db.run.count()) > 0 || (await db.user.count()) > 1)
      return { admin, demoPassword: null, demoUsers: [] };
    options.log('empty database: seeding demo people and the crashed welcome campaign');
    const demoPassword = generatePassword();
    const users = [];
    for (const person of DEMO_PEOPLE) {
      users.push(await db.$transaction((tx) => insertUser(tx, { ...person, password: demoPassword }, SEED)));
    }
    const olivia = users[0]!;
    const result = await seedDemoCampaign({
      db,
      approver: { kind: 'user', id: olivia.id, label: olivia.email, role: 'operator' },
      sandboxUrl: options.sandboxUrl,
      log: (line) => options.log(`demo agent: ${line}`),
    });
    // The agent process "died": record what an operator would see, in the same transaction as its audit entry.
    await db.$transaction(async (tx) => {
      await tx.run.update({ where: { id: result.runId }, data: { status: 'crashed', updatedAt: new Date() } });
      await appendAudit(tx, {
        chain: `run:${result.runId}`,
        actor: SEED,
        action: 'run.crashed',
        subjectType: 'run',
        subjectId: result.runId,
        runId: result.runId,
        before: 'running',
        after: 'crashed',
        detail: { crashedAt: result.crashedAt, notStarted: result.notStarted },
      });
    });
    const o = result.outcomes;
    options.log(
      `demo run ${result.runId}: ${o.done} done, ${o.failed} failed, ${o.unknown} unknown, ${result.notStarted} never started (the agent "crashed" at recipient ${result.crashedAt?.index ?? '?'})`,
    );
    return { admin, demoPassword, demoUsers: DEMO_PEOPLE.map((p) => ({ email: p.email, role: p.role })) };
  } finally {
    await db.$disconnect();
  }
}
