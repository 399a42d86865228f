// `effect-ledger apply -f ledger.yaml [--dry-run] [--secrets-file FILE]`: the file is parsed here
// (YAML, with the `yaml` package) and sent whole with its SHA-256; the server computes the changes
// and applies them in one transaction (docs/MANAGE.md). New runtime keys' secrets come back once:
// written to --secrets-file (mode 0600) or printed. The server's warnings (a notification route whose
// secret variable it does not have) are printed with the changes.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { UsageError, type ManageClient } from './client.ts';
import { show, type Out } from './output.ts';

interface Change {
  kind: string;
  action: string;
  name?: string;
  fields?: string[];
  workflows?: string[];
  workflow?: string;
  user?: string;
  role?: string;
}

const SIGN: Record<string, string> = { create: '+', add: '+', update: '~', replace: '~', remove: '-' };

export function describeChange(c: Change): string {
  const sign = SIGN[c.action] ?? '?';
  if (c.kind === 'tool') return `${sign} tool ${c.name}${c.fields ? ` (${c.fields.join(', ')})` : ''}`;
  if (c.kind === 'runtime_key') return `${sign} runtime key ${c.name} on ${c.workflows?.join(', ')}`;
  if (c.kind === 'notification_route')
    return `${sign} notification route ${c.name}${c.fields ? ` (${c.fields.join(', ')})` : ''}`;
  return `${sign} grant ${c.role} to ${c.user} on ${c.workflow === '*' ? 'every workflow' : c.workflow}`;
}

export async function applyFile(
  api: ManageClient,
  file: string,
  options: { dryRun: boolean; secretsFile?: string },
  out: Out,
): Promise<number> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = parse(bytes.toString('utf8')) ?? {};
  } catch (error) {
    throw new UsageError(`${file} is not valid YAML: ${(error as Error).message}`);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const result = await api.post<{
    changes: Change[];
    warnings?: string[];
    secrets: { name: string; id: string; token: string }[];
  }>('/apply', { document, sha256, dryRun: options.dryRun });
  if (options.secretsFile && result.secrets.length) {
    const secrets = Object.fromEntries(result.secrets.map((s) => [s.name, s.token]));
    writeFileSync(options.secretsFile, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  }
  const shown = options.secretsFile ? { ...result, secrets: result.secrets.map(({ token: _t, ...s }) => s) } : result;
  show(out, shown, () => {
    const lines = result.changes.map(describeChange);
    const head = options.dryRun ? 'would change (dry run, nothing written):' : 'changed:';
    const body = lines.length ? `${head}\n${lines.join('\n')}\n` : 'no changes\n';
    const warnings = (result.warnings ?? []).map((w) => `warning: ${w}\n`).join('');
    const secrets = options.secretsFile
      ? result.secrets.length
        ? `secrets of new runtime keys written to ${options.secretsFile}\n`
        : ''
      : result.secrets.map((s) => `secret of runtime key ${s.name} (shown once): ${s.token}\n`).join('');
    return `${body}${warnings}${secrets}sha256 ${sha256}\n`;
  });
  return 0;
}
