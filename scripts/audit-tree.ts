// npm run audit:tree [-- --vkey]: integrates every committed audit entry into the audit tree, then signs
// its head with AUDIT_SIGNING_KEY when it extends the head signed last (state file AUDIT_TREE_STATE,
// default beside the key); the worker leader does the same on its schedule. Prints the signed note.
// Exits 1 when the signer refused (the trail or the tree was rewritten), 2 on a configuration error.
// --vkey prints the log's verifier key, which auditors and witnesses pin.
import { treeSignerFrom, logVkey } from '@/lib/audit/tree/config.ts';
import { signTreeHead } from '@/lib/audit/tree/signer.ts';
import { integrateAll } from '@/lib/audit/tree/store.ts';
import { signerDatabaseUrl, SIGNER_CONNECTION_MISSING } from '@/lib/audit/signer-connection.ts';
import { createDb } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';

async function main(): Promise<number> {
  const option = process.argv[2];
  if (option && option !== '--vkey') {
    console.error('usage: npm run audit:tree [-- --vkey]');
    return 2;
  }
  const signer = treeSignerFrom(env());
  if (option === '--vkey') {
    if ('missing' in signer) return (console.error(signer.missing), 2);
    console.log(logVkey(signer));
    return 0;
  }
  // Imported only when needed: the embedded server's exit hook would otherwise reset the exit code.
  const provisioned = env().DATABASE_URL
    ? null
    : await (await import('@/lib/db/provision.ts')).provisionDatabase({ log: () => undefined });
  const db = createDb(env().DATABASE_URL ?? provisioned!.appUrl, 2);
  // The head is stored through the signer's connection (the app role may only read heads).
  const signerUrl = signerDatabaseUrl(env()) ?? provisioned?.ownerUrl;
  const signerDb = signerUrl ? createDb(signerUrl, 2) : null;
  try {
    const size = await integrateAll(db);
    console.log(`[audit:tree] the tree holds ${size} entries`);
    if ('missing' in signer) return (console.error(`[audit:tree] not signed: ${signer.missing}`), 2);
    if (!signerDb) return (console.error(`[audit:tree] not signed: ${SIGNER_CONNECTION_MISSING}`), 2);
    const r = await signTreeHead(signerDb, signer, { log: (line) => console.error(`[audit:tree] ${line}`) });
    if (r.kind === 'signed') process.stdout.write(r.note);
    if (r.kind === 'unchanged') console.log(`[audit:tree] the head signed last (${r.size} leaves) is current`);
    return r.kind === 'refused' ? 1 : 0;
  } finally {
    await db.$disconnect();
    await signerDb?.$disconnect();
    await provisioned?.stop();
  }
}

process.exitCode = await main();
