// npm run audit:tree-verify -- --head <note> [--head <cosigned note>]... --log-key <vkey>
//   [--witness-key <vkey>]... [--quorum <n>] [--inclusion <proof.json>]... [--since <old note> --consistency <proof.json>]
// Checks the audit tree's evidence offline (lib/sdk/audit/tree-verify.ts): the head's signatures and a
// quorum of known witnesses, each inclusion proof (the API's answer, saved) against the head, and that
// the head extends an older signed head. Prints OK and exits 0, or names the problem and exits 1;
// exits 2 on a usage error.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyTreeEvidence } from '@/lib/sdk/audit/tree-verify.ts';

function main(): number {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        head: { type: 'string', multiple: true },
        'log-key': { type: 'string' },
        'witness-key': { type: 'string', multiple: true },
        quorum: { type: 'string' },
        inclusion: { type: 'string', multiple: true },
        since: { type: 'string', multiple: true },
        consistency: { type: 'string' },
      },
    }));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const quorum = Number(values.quorum ?? 0);
  if (!values.head?.length || !values['log-key'] || !Number.isInteger(quorum) || quorum < 0) {
    console.error(
      'usage: npm run audit:tree-verify -- --head <note>... --log-key <vkey> [--witness-key <vkey>]... [--quorum <n>] [--inclusion <file>]... [--since <note> --consistency <file>]',
    );
    return 2;
  }
  const read = (file: string) => readFileSync(file, 'utf8');
  const result = verifyTreeEvidence({
    heads: values.head.map(read),
    logKey: values['log-key'],
    witnessKeys: values['witness-key'] ?? [],
    quorum,
    inclusions: (values.inclusion ?? []).map((f) => JSON.parse(read(f))),
    since: values.since?.map(read),
    consistency: values.consistency ? JSON.parse(read(values.consistency)) : undefined,
  });
  if (!result.ok) {
    console.error(`BROKEN: ${result.problem}`);
    return 1;
  }
  const w = result.head.witnesses.map((x) => x.name).join(', ') || 'none';
  const since = result.consistentFrom === null ? '' : `, extends the head of ${result.consistentFrom} leaves`;
  console.log(
    `OK: head of ${result.head.size} leaves signed by ${result.head.origin}, cosigned by ${w}; ${result.inclusions} inclusion proofs verify${since}`,
  );
  return 0;
}

process.exitCode = main();
