// Ad-hoc runner for the fault parts alone (the lead's scripts/proof/index.ts runs every part):
//   node --import tsx scripts/proof/support/faults-run.ts crash-matrix|provider-faults [full|reduced]
// Starts a throwaway embedded PostgreSQL, migrated once; each newDatabase() is a copy of it.
import pg from 'pg';
import { startThrowawayDatabase } from '@/lib/db/scratch.ts';
import type { ProofPart } from '../section.ts';

const [name = 'crash-matrix', scale = 'reduced'] = process.argv.slice(2);
const base = await startThrowawayDatabase({ name: 'faults', appUser: 'ledger_app_faults', fsync: false });
let n = 0;
const started = Date.now();
try {
  const { proof } = (await import(`../parts/${name}.ts`)) as { proof: ProofPart };
  const section = await proof({
    scale: scale === 'full' ? 'full' : 'reduced',
    async newDatabase() {
      const db = `faults_${n++}`;
      const admin = new pg.Client({ connectionString: base.ownerUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${db} TEMPLATE faults`);
      await admin.end();
      const swap = (url: string) => {
        const u = new URL(url);
        u.pathname = `/${db}`;
        return u.toString();
      };
      return { ownerUrl: swap(base.ownerUrl), appUrl: swap(base.appUrl) };
    },
    log: (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}`),
  });
  console.log(JSON.stringify(section, null, 2));
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await base.stop();
}
process.exit(0);
