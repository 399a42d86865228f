// npm run audit:verify [-- <export.jsonl> [--checkpoints <file> --public-key <key.pem> ...]]: checks
// the audit trail (A2, A5) and exits 1 naming the first broken entry.
// - With a file: a JSON Lines export is checked with no database at all; every entry's hash and every
//   link is recomputed (exit 2 when the file cannot be read). The file is read line by line and only
//   each entry's place and hashes are kept, so its size is not bounded by the longest string Node holds;
//   a malformed line (invalid UTF-8, duplicate names, lone surrogates, a line past MAX_LINE_BYTES, ...)
//   is a break named by its line (exit 1). This is what an external auditor runs.
//   With a checkpoints file (`npm run audit:checkpoint -- --export`) and the public keys (one per key
//   id, from the console), every signature is checked and the export against every checkpoint: a
//   rewritten or rewound chain is named with its seq. A signed bundle (export version 3) is checked
//   against the log's verifier key (--log-key, and --witness-key/--quorum for its witnesses): its
//   head, every entry's leaf, and the signed statement of its coverage.
// - Without one: every chain of the database at DATABASE_URL (or the embedded one) is checked in
//   place; run it after every restore.
import { createReadStream, readFileSync } from 'node:fs';
import type { BundleTrust } from '@/lib/sdk/audit/bundle.ts';
import type { CheckpointInput } from '@/lib/sdk/audit/checkpoint-verify.ts';
import { ExportVerifier, exportLines } from '@/lib/sdk/audit/verify-export.ts';

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    console.error(`cannot read ${file}: ${(error as Error).message}`);
    return null;
  }
}

async function verifyFile(
  file: string,
  checkpointsFile?: string,
  keyFiles: string[] = [],
  trust?: BundleTrust,
): Promise<number> {
  let checkpoints: CheckpointInput | undefined;
  if (checkpointsFile) {
    const raw = readText(checkpointsFile);
    const pems = keyFiles.map(readText);
    if (raw === null || pems.some((p) => p === null)) return 2;
    try {
      checkpoints = { file: JSON.parse(raw) as CheckpointInput['file'], publicKeys: pems as string[] };
    } catch (error) {
      console.error(`cannot read the checkpoints or a public key: ${(error as Error).message}`);
      return 2;
    }
  }
  let verifier: ExportVerifier;
  try {
    verifier = new ExportVerifier(checkpoints, trust);
  } catch (error) {
    console.error(`cannot use a public key: ${(error as Error).message}`);
    return 2;
  }
  // Line by line: the export is never one string (a string cannot exceed about 512 MB, an export can).
  // Bytes, not text: each line is decoded as strict UTF-8, so an invalid byte is refused, not replaced.
  try {
    for await (const line of exportLines(createReadStream(file))) verifier.add(line);
  } catch (error) {
    console.error(`cannot read ${file}: ${(error as Error).message}`);
    return 2;
  }
  let result: ReturnType<ExportVerifier['finish']>;
  try {
    result = verifier.finish();
  } catch (error) {
    console.error(`cannot use the checkpoints: ${(error as Error).message}`);
    return 2;
  }
  if (!result.ok) {
    console.log(
      `BROKEN at line ${result.line}: entry ${result.id ?? '?'} (chain ${result.chain ?? '?'}, seq ${result.seq ?? '?'}): ${result.problem}`,
    );
    return 1;
  }
  console.log(`OK: ${result.entries} entries in ${result.chains} chains verify (hashes and links)`);
  if (result.bundle)
    console.log(
      `  signed bundle: cut at the tree head of ${result.bundle.treeSize} leaves (cosigned by ${result.bundle.witnesses.join(', ') || 'no known witness'}); covers ${result.bundle.coverage}; every entry is in the signed tree and the signed statement verifies`,
    );
  if (checkpoints)
    console.log(
      `  checkpoints: ${checkpoints.file.checkpoints.length} signatures verify; ${result.checkpointsChecked ?? 0} checkpointed heads inside the export match`,
    );
  for (const u of result.checkpointsUnchecked ?? [])
    console.log(
      `  NOT CHECKED: a checkpoint holds chain ${u.chain} at seq ${u.seq}, beyond ${u.exportEndsAt === null ? 'this export, which holds none of the chain' : `seq ${u.exportEndsAt}, where this export ends`}; the unsigned summary says a filter applied, which this file cannot prove`,
    );
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

const USAGE =
  'usage: npm run audit:verify [-- <export.jsonl> [--checkpoints <file> --public-key <key.pem> ...] [--log-key <vkey> [--witness-key <vkey>]... [--quorum <n>]]]';
const files: string[] = [];
const keyFiles: string[] = [];
const witnessKeys: string[] = [];
let logKey: string | undefined;
let quorum = 0;
let checkpointsFile: string | undefined;
let unknownOption = false;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const value = args[i + 1];
  if (args[i] === '--checkpoints' && value) {
    checkpointsFile = value;
    i++;
  } else if (args[i] === '--public-key' && value) {
    keyFiles.push(value);
    i++;
  } else if (args[i] === '--log-key' && value) {
    logKey = value;
    i++;
  } else if (args[i] === '--witness-key' && value) {
    witnessKeys.push(value);
    i++;
  } else if (args[i] === '--quorum' && value && /^\d+$/.test(value)) {
    quorum = Number(value);
    i++;
  } else if (args[i]!.startsWith('--')) unknownOption = true;
  else files.push(args[i]!);
}
if (
  unknownOption ||
  files.length > 1 ||
  (checkpointsFile && (!files[0] || keyFiles.length === 0)) ||
  (keyFiles.length && !checkpointsFile) ||
  ((witnessKeys.length || quorum) && !logKey) ||
  (logKey && !files[0])
) {
  console.error(USAGE);
  process.exit(2);
}
const trust = logKey ? { logKey, witnessKeys, quorum } : undefined;
const code = files[0] ? await verifyFile(files[0], checkpointsFile, keyFiles, trust) : await verifyDatabase();
// Exits explicitly: the embedded PostgreSQL package (loaded in database mode) installs an exit hook
// that resets process.exitCode, which made a broken trail exit 0.
process.exit(code);
