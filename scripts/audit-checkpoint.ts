// npm run audit:checkpoint [-- --export <checkpoints.json> | --public-key]: signs the head of every
// audit chain that moved since its last checkpoint with AUDIT_SIGNING_KEY (Ed25519, PKCS8 PEM or a
// path to one) and stores the signed checkpoints; the worker leader does the same every
// AUDIT_CHECKPOINT_INTERVAL_SECONDS. Exits 1 when a chain's head is behind what was signed (rewound).
// --export writes every stored checkpoint as the file `npm run audit:verify -- --checkpoints` reads;
// --public-key prints the public key (PEM) of the configured signing key. Signatures are stored through
// AUDIT_SIGNER_DATABASE_URL, else MIGRATION_DATABASE_URL (lib/audit/signer-connection.ts).
import { writeFileSync } from 'node:fs';
import {
  listCheckpoints,
  loadCheckpointKey,
  loadTrustedKeys,
  publicKeyPem,
  signChainHeads,
} from '@/lib/audit/checkpoint.ts';
import type { CheckpointsFile } from '@/lib/sdk/audit/checkpoint-signature.ts';
import { signerDatabaseUrl, SIGNER_CONNECTION_MISSING } from '@/lib/audit/signer-connection.ts';
import { createDb } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';

const [option, target] = process.argv.slice(2);
if ((option && !['--export', '--public-key'].includes(option)) || (option === '--export' && !target)) {
  console.error('usage: npm run audit:checkpoint [-- --export <checkpoints.json> | --public-key]');
  process.exit(2);
}

async function main(): Promise<number> {
  const setting = env().AUDIT_SIGNING_KEY;
  if (option !== '--export' && !setting) {
    console.error('AUDIT_SIGNING_KEY is not set (an Ed25519 PKCS8 PEM, or the path of one)');
    return 2;
  }
  const key = setting ? loadCheckpointKey(setting) : null;
  if (option === '--public-key') {
    process.stdout.write(publicKeyPem(key!));
    return 0;
  }
  // Imported only when needed: the embedded server's exit hook would otherwise reset the exit code.
  const provisioned = env().DATABASE_URL
    ? null
    : await (await import('@/lib/db/provision.ts')).provisionDatabase({ log: () => undefined });
  // Signing stores through the signer's connection (the app role may only read checkpoints).
  const url =
    option === '--export'
      ? (env().DATABASE_URL ?? provisioned!.appUrl)
      : (signerDatabaseUrl(env()) ?? provisioned?.ownerUrl);
  if (!url) {
    console.error(`[audit:checkpoint] ${SIGNER_CONNECTION_MISSING}`);
    return 2;
  }
  const db = createDb(url, 2);
  try {
    if (option === '--export') {
      const file: CheckpointsFile = {
        format: 'effect-ledger-checkpoints',
        version: 1,
        checkpoints: await listCheckpoints(db),
      };
      writeFileSync(target!, JSON.stringify(file, null, 1) + '\n');
      console.log(`[audit:checkpoint] wrote ${file.checkpoints.length} checkpoints to ${target}`);
      return 0;
    }
    const round = await signChainHeads(db, key!, loadTrustedKeys(env().AUDIT_PREVIOUS_PUBLIC_KEYS));
    for (const u of round.untrusted)
      console.error(
        `[audit:checkpoint] UNTRUSTED: a stored checkpoint of chain ${u.chain} at seq ${u.seq} (key ${u.keyId}) does not verify with a trusted key; ignored`,
      );
    console.log(`[audit:checkpoint] signed ${round.signed} chain heads with key ${key!.keyId}`);
    for (const r of round.rewound)
      console.error(`[audit:checkpoint] REWOUND: chain ${r.chain} is at seq ${r.seq}, seq ${r.signedSeq} was signed`);
    return round.rewound.length ? 1 : 0;
  } finally {
    await db.$disconnect();
    await provisioned?.stop();
  }
}

// Exits explicitly: the embedded PostgreSQL package, when loaded, resets process.exitCode on exit.
process.exit(await main());
