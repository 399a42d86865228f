// K4 check tool: `npm run conformance -- [path/to/tools.ts ...]`. Each module exports `conformance`:
// an array of { tool, sample } (a ToolDefinition from lib/sdk and realistic arguments). Every
// model-generated input is varied and every identity input spelled otherwise (case, whitespace, a
// format character, compatibility forms); the check fails (exit 1) if the key moves, or if resolve()
// reads a generated input. Without arguments it checks the demo campaign's tool.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkConformance, type ToolDefinition } from '../lib/sdk/index.ts';

interface Entry {
  tool: ToolDefinition<Record<string, unknown>>;
  sample: Record<string, unknown>;
}

async function entriesFrom(file: string): Promise<Entry[]> {
  const mod = (await import(pathToFileURL(path.resolve(file)).href)) as { conformance?: Entry[]; default?: Entry[] };
  const entries = mod.conformance ?? mod.default;
  if (!Array.isArray(entries)) throw new Error(`${file} must export \`conformance\`: [{ tool, sample }, ...]`);
  return entries;
}

async function main() {
  const files = process.argv.slice(2).filter((a) => a !== '--');
  let entries: Entry[];
  if (files.length === 0) {
    const demo = await import('../lib/demo/campaign.ts');
    entries = [{ tool: demo.welcomeEmail as unknown as Entry['tool'], sample: demo.demoRecipients(1)[0]! }];
  } else {
    entries = (await Promise.all(files.map(entriesFrom))).flat();
  }
  let failed = 0;
  for (const { tool, sample } of entries) {
    const report = await checkConformance(tool, { sample });
    if (report.ok) {
      const identity = Object.keys(sample).filter((input) => !(tool.generated as readonly string[]).includes(input));
      console.log(
        `ok    ${tool.name}/${tool.action}: ${report.variations} variations of ${tool.generated.join(', ') || '(no generated inputs)'} and spellings of ${identity.join(', ') || '(no identity inputs)'} (${report.refused} refused by resolve); key stable`,
      );
    } else {
      failed += 1;
      console.log(`FAIL  ${tool.name}/${tool.action}`);
      for (const p of report.problems) console.log(`      ${p.input} [${p.variant}]: ${p.problem}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(2);
});
