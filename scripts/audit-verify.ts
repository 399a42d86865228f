// npm run audit:verify [-- <export.jsonl>]: checks the audit trail (A2, A5) and exits 1 naming the
// first broken entry.
// - With a file: a JSON Lines export is checked with no database at all; every entry's hash and every
//   link is recomputed (exit 2 when the file cannot be read). This is what an external auditor runs.
// - Without one: every chain of the database at DATABASE_URL (or the embedded one) is checked in
//   place; run it after every restore.
import { readFileSync } from 'node:fs';
import { verifyExport } from '@/lib/audit/verify-export.ts';

async function verifyFile(file: string): Promise<number> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    console.error(`cannot read ${file}: ${(error as Error).message}`);
    return 2;
  }
  const result = verifyExport(text);
  if (!result.ok) {
    console.log(
      `BROKEN at line ${result.line}: entry ${result.id ?? '?'} (chain ${result.chain ?? '?'}, seq ${result.seq ?? '?'}): ${result.problem}`,
    );
    return 1;
  }
  console.log(`OK: ${result.entries} entries in ${result.chains} chains verify (hashes and links)`);
  for (const p of result.partial)
    console.log(
      `  partial: chain ${p.chain} holds seq ${p.first_seq}-${p.last_seq}; its first prev_hash is the anchor`,
    );
  return 0;
}

async function verifyDatabase(): Promise<number> {
  // Imported here so that checking a file never loads the database client.
  const { createDb } = await import('@/lib/db/client.ts');
  const { env } = await import('@/lib/env.ts');
  const { provisionDatabase } = await import('@/lib/db/provision.ts');
  const { verifyAuditTrail } = await import('@/lib/audit/verify.ts');
  const provisioned = env().DATABASE_URL ? null : await provisionDatabase({ log: () => undefined });
  const db = createDb(env().DATABASE_URL ?? provisioned!.appUrl, 2);
  try {
    const r = await verifyAuditTrail(db);
    if (r.ok) {
      console.log(`[audit:verify] ok: ${r.entries} entries in ${r.chains} chains verify`);
      return 0;
    }
    console.error(
      `[audit:verify] BROKEN: chain ${r.chain}, seq ${r.seq}, entry ${r.entryId ?? '(missing)'}: ${r.problem}`,
    );
    return 1;
  } finally {
    await db.$disconnect();
    await provisioned?.stop();
  }
}

const args = process.argv.slice(2);
if (args.length > 1) {
  console.error('usage: npm run audit:verify [-- <export.jsonl>]');
  process.exit(2);
}
process.exitCode = args[0] ? await verifyFile(args[0]) : await verifyDatabase();
