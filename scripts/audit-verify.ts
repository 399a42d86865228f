// `npm run audit:verify`: verifies the whole audit trail (A2) of the database at DATABASE_URL (or the
// embedded one) and exits 1 naming the first entry that does not verify. Run it after every restore.
import { createDb } from '../lib/db/client.ts';
import { env } from '../lib/env.ts';
import { provisionDatabase } from '../lib/db/provision.ts';
import { verifyAuditTrail } from '../lib/audit/verify.ts';

const provisioned = env().DATABASE_URL ? null : await provisionDatabase({ log: () => undefined });
const db = createDb(env().DATABASE_URL ?? provisioned!.appUrl, 2);
try {
  const r = await verifyAuditTrail(db);
  if (r.ok) console.log(`[audit:verify] ok: ${r.entries} entries in ${r.chains} chains verify`);
  else {
    console.error(
      `[audit:verify] BROKEN: chain ${r.chain}, seq ${r.seq}, entry ${r.entryId ?? '(missing)'}: ${r.problem}`,
    );
    process.exitCode = 1;
  }
} finally {
  await db.$disconnect();
  await provisioned?.stop();
}
