// `effect-ledger`: the management API from a shell (docs/MANAGE.md). Exit codes: 0 done, 1 refused
// or failed (the server's problem is printed), 2 usage (unknown command, missing argument or
// configuration). Arguments are parsed with node:util parseArgs (the standard library's parser);
// the one dependency of the package is `yaml`, for apply's setup files.
import { parseArgs } from 'node:util';
import { connection, ManageClient, Refused, UsageError } from './client.ts';
import { COMMANDS, OFFLINE } from './commands.ts';
import type { Out } from './output.ts';

const USAGE = `usage: effect-ledger <command> [arguments] [--json]

  runs list [--workflow W] [--status S] [--cursor C]
  targets show <key>
  plan approve <runId> [--reason R]
  revoke <key>... --reason R
  bump request <key>... --reason R
  bump approve <requestId> [--reason R]
  unknowns resolve <key> --outcome sent|not_sent --reason R [--receipt X]
  replay request <runId> --count N --reason R
  replay approve <approvalRequestId> [--reason R]
  replay start|pause|resume <replayId> [--reason R]
  replay cancel <replayId> --reason R
  replay watch <replayId> [--interval MS]
  apply -f ledger.yaml [--dry-run] [--secrets-file FILE]
  audit export [--out FILE] [--format jsonl|csv]
  audit verify <file>

Connection: EFFECT_LEDGER_URL and EFFECT_LEDGER_TOKEN, or a JSON config file {"url", "token"} at
EFFECT_LEDGER_CONFIG or ~/.config/effect-ledger/config.json.
Exit codes: 0 done, 1 refused or failed, 2 usage.
`;

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  reason: { type: 'string' },
  workflow: { type: 'string' },
  status: { type: 'string' },
  cursor: { type: 'string' },
  outcome: { type: 'string' },
  receipt: { type: 'string' },
  count: { type: 'string' },
  interval: { type: 'string' },
  out: { type: 'string' },
  format: { type: 'string' },
  file: { type: 'string', short: 'f' },
  'dry-run': { type: 'boolean' },
  'secrets-file': { type: 'string' },
} as const;

export async function main(
  argv: string[],
  io: { stdout: (s: string) => void; stderr: (s: string) => void; env: NodeJS.ProcessEnv },
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    io.stderr(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const [first, second, ...rest] = parsed.positionals;
  if (parsed.values.help || !first) {
    (parsed.values.help ? io.stdout : io.stderr)(USAGE);
    return parsed.values.help ? 0 : 2;
  }
  const two = `${first} ${second ?? ''}`.trim();
  const [name, positionals] = COMMANDS[two] ? [two, rest] : [first, parsed.positionals.slice(1)];
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`unknown command: ${two}\n\n${USAGE}`);
    return 2;
  }
  const out: Out = { json: Boolean(parsed.values.json), write: io.stdout };
  try {
    const api = OFFLINE.has(name) ? (null as unknown as ManageClient) : new ManageClient(connection(io.env));
    return await command(api, { positionals, values: parsed.values }, out);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof Refused) {
      io.stderr(
        out.json ? `${JSON.stringify({ status: error.status, ...error.problem })}\n` : `refused: ${error.message}\n`,
      );
      return 1;
    }
    io.stderr(`failed: ${(error as Error).message}\n`);
    return 1;
  }
}
