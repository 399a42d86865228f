// `npm run runtime-key:create -- --name billing-agent --workflows welcome-campaign,invoices`
// Creates a runtime key (Z6) and prints its token once; only its SHA-256 is stored. Audited as a
// system action by the operator of this machine. Connects to DATABASE_URL, or to the embedded
// database of `npm start` when none is set.
import { parseArgs } from 'node:util';
import { createDb } from '../lib/db/client.ts';
import { env } from '../lib/env.ts';
import { provisionDatabase } from '../lib/db/provision.ts';
import { createRuntimeKey } from '../lib/runtime-keys/index.ts';

async function main() {
  const { values } = parseArgs({
    options: { name: { type: 'string' }, workflows: { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help || !values.name || !values.workflows) {
    console.error('usage: npm run runtime-key:create -- --name <runtime name> --workflows <workflow,...|*>');
    process.exit(values.help ? 0 : 2);
  }
  const provisioned = env().DATABASE_URL ? null : await provisionDatabase({ log: () => undefined });
  const db = createDb(env().DATABASE_URL ?? provisioned!.appUrl, 2);
  try {
    const key = await createRuntimeKey(
      { db, actor: { kind: 'system', id: `cli:${process.env.USER ?? 'unknown'}`, label: 'runtime-key:create (CLI)' } },
      {
        name: values.name,
        workflows: values.workflows
          .split(',')
          .map((w) => w.trim())
          .filter(Boolean),
      },
    );
    console.log(`Runtime key "${key.name}" (${key.id}) for workflows: ${key.workflows.join(', ')}`);
    console.log("Token (shown once, store it in your runtime's secret store):");
    console.log(key.token);
  } finally {
    await db.$disconnect();
    await provisioned?.stop();
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
