// npm run witness -- --url <ledger> --log-key <vkey> --key <witness key.pem> --name <name>
//   [--state <file>] [--interval <seconds>] | --vkey
// An independent witness of the audit tree (lib/audit/tree/witness.ts): its own Ed25519 key (PKCS8 PEM
// file, `openssl genpkey -algorithm ed25519`), its own state file (default: the key's path plus
// `.witness-state`), a runtime key for the ledger's API in WITNESS_RUNTIME_KEY. Each round fetches the
// newest head, checks it extends the head it cosigned last, and cosigns; the state file is the cosigned
// note auditors pass to `npm run audit:tree-verify -- --head`. Once, or every --interval seconds.
// Exits 1 when it refused a head, 2 on a usage error. --vkey prints its verifier key.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { witnessOnce, type WitnessConfig } from '@/lib/audit/tree/witness.ts';
import { formatVkey, parseVkey, verifierFor } from '@/lib/sdk/audit/signed-note.ts';

const USAGE =
  'usage: npm run witness -- --url <ledger url> --log-key <vkey> --key <key.pem> --name <name> [--state <file>] [--interval <s>] | --key <key.pem> --name <name> --vkey';

function config(): { w: Omit<WitnessConfig, 'log' | 'baseUrl' | 'token'>; values: Record<string, unknown> } {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      'log-key': { type: 'string' },
      key: { type: 'string' },
      name: { type: 'string' },
      state: { type: 'string' },
      interval: { type: 'string' },
      vkey: { type: 'boolean' },
    },
  });
  if (!values.key || !values.name) throw new Error(USAGE);
  const privateKey = createPrivateKey(readFileSync(values.key, 'utf8'));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the witness key must be an Ed25519 key');
  return { w: { name: values.name, privateKey, statePath: values.state ?? `${values.key}.witness-state` }, values };
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = config();
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const { w, values } = parsed;
  if (values.vkey) {
    console.log(formatVkey(verifierFor(w.name, w.privateKey)));
    return 0;
  }
  const token = process.env.WITNESS_RUNTIME_KEY;
  if (typeof values.url !== 'string' || typeof values['log-key'] !== 'string' || !token) {
    console.error(`${USAGE}\n(and WITNESS_RUNTIME_KEY: a runtime key for the ledger's API)`);
    return 2;
  }
  const witness: WitnessConfig = { ...w, log: parseVkey(values['log-key']), baseUrl: values.url, token };
  const interval = Number(values.interval ?? 0) * 1000;
  for (;;) {
    const r = await witnessOnce(witness).catch((error: Error) => ({ kind: 'failed' as const, problem: error.message }));
    if (r.kind === 'cosigned')
      console.log(
        `[witness] cosigned the head at ${r.size} leaves; ${r.submitted === true ? 'the ledger stored it' : `the ledger did not take it: ${r.submitted}`}`,
      );
    else if (r.kind === 'unchanged') console.log(`[witness] the head is still at ${r.size} leaves`);
    else console.error(`[witness] ${r.kind === 'refused' ? 'REFUSED' : 'failed'}: ${r.problem}`);
    if (!interval) return r.kind === 'refused' ? 1 : r.kind === 'failed' ? 2 : 0;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

process.exitCode = await main();
