// The management API as the CLI calls it: where the ledger is and the person's access token, from
// EFFECT_LEDGER_URL / EFFECT_LEDGER_TOKEN or a config file, and every answer either JSON or a
// Refused carrying the problem document (status, code, field) the server named.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

export class UsageError extends Error {}

/** The server refused or failed: exit 1, with the problem document's words. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly problem: { code?: string; detail?: string; field?: string; [k: string]: unknown },
  ) {
    super(
      `${status} ${problem.code ?? 'error'}: ${problem.detail ?? 'no detail'}${problem.field ? ` (field: ${problem.field})` : ''}`,
    );
  }
}

export interface Connection {
  url: string;
  token: string;
}

/** The config file: EFFECT_LEDGER_CONFIG, else ~/.config/effect-ledger/config.json, holding
 *  {"url": "...", "token": "elp_..."}. The environment wins over the file, field by field. */
export function connection(env: NodeJS.ProcessEnv): Connection {
  const file = env.EFFECT_LEDGER_CONFIG ?? path.join(homedir(), '.config', 'effect-ledger', 'config.json');
  let fromFile: Partial<Connection> = {};
  try {
    fromFile = JSON.parse(readFileSync(file, 'utf8')) as Partial<Connection>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || env.EFFECT_LEDGER_CONFIG)
      throw new UsageError(`cannot read the config file ${file}: ${(error as Error).message}`);
  }
  const url = env.EFFECT_LEDGER_URL ?? fromFile.url;
  const token = env.EFFECT_LEDGER_TOKEN ?? fromFile.token;
  if (!url) throw new UsageError('no ledger address: set EFFECT_LEDGER_URL or "url" in the config file');
  if (!token)
    throw new UsageError(
      'no access token: set EFFECT_LEDGER_TOKEN or "token" in the config file (create one at /account/tokens)',
    );
  return { url: url.replace(/\/+$/, ''), token };
}

export class ManageClient {
  constructor(private readonly c: Connection) {}

  async raw(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
    const res = await fetch(`${this.c.url}/api/v1/manage${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.c.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        'user-agent': 'effect-ledger-cli',
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) {
      const text = await res.text();
      let problem: Refused['problem'];
      try {
        problem = JSON.parse(text) as Refused['problem'];
      } catch {
        problem = { detail: text.slice(0, 500) };
      }
      throw new Refused(res.status, problem);
    }
    return res;
  }

  async get<T = Record<string, unknown>>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    const res = await this.raw('GET', `${path}${q.size ? `?${q}` : ''}`);
    return (await res.json()) as T;
  }

  async post<T = Record<string, unknown>>(path: string, body: unknown): Promise<T> {
    return (await (await this.raw('POST', path, body)).json()) as T;
  }
}
