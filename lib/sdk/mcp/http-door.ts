// What the MCP server over HTTP checks before it serves a request:
//  - the Host and Origin headers (DNS rebinding): a web page in the user's browser can make the
//    browser send requests to a server on the user's machine under a name the page controls; such a
//    request names that host, and a page's request names the page's origin. Only the names this
//    server listens under (and those the operator adds) pass. Checked first, so a page cannot make
//    the ledger count failed authentications against this server's address either.
//  - the bearer runtime key, with the ledger: read-only tools never reach the ledger, so without this
//    any string after "Bearer" ran them. A key the ledger accepted is believed for AUTH_TTL_MS; tools
//    with effects go to the ledger with the key on every call anyway, so a key revoked meanwhile
//    loses them at once and only keeps read-only tools for that long at most.
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { LedgerApiError } from '../errors.ts';
import { httpTransport } from '../http.ts';

export const AUTH_TTL_MS = 30_000;
/** A key no effect has: the cheapest authenticated request (the key check, then two index lookups). */
const PROBE_KEY = 'mcp-runtime-key-check';
const MAX_CACHED = 1_000;

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];
const bracket = (host: string) => (isIP(host) === 6 ? `[${host}]` : host);

/** Host header values this server answers to: every name of the address it listens on, with its port. */
export function allowedHostsFor(listen: string, port: number, extra: string[] = []): string[] {
  let names: string[];
  if (listen === '0.0.0.0' || listen === '::') {
    // Listening everywhere: the machine's own names and addresses, never a name a page could own.
    const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
    names = [...LOOPBACK, hostname(), ...addresses];
  } else if (LOOPBACK.includes(listen) || listen.startsWith('127.')) {
    names = [...LOOPBACK, listen];
  } else {
    names = [listen];
  }
  const hosts = names.map(bracket).flatMap((n) => (port === 80 ? [`${n}:${port}`, n] : [`${n}:${port}`]));
  return [...new Set([...hosts, ...extra])];
}

/** Why the request's Host or Origin is not one of ours, or null. A request without an Origin (no
 *  browser page sent it) passes on its Host alone. */
export function rebindingProblem(req: http.IncomingMessage, hosts: string[], origins: string[]): string | null {
  const host = req.headers.host;
  if (!host || !hosts.includes(host)) return `this MCP server does not answer to the host ${host ?? '(none)'}`;
  const origin = req.headers.origin;
  if (origin !== undefined && !origins.includes(origin)) return `requests from ${origin} are not allowed`;
  return null;
}

export type KeyVerdict = { ok: true } | { ok: false; status: 401 | 429 | 503; detail: string };

/** Checks bearer runtime keys with the ledger, remembering the keys it accepted for a short time. */
export class RuntimeKeyCheck {
  private readonly accepted = new Map<string, number>();
  private readonly asking = new Map<string, Promise<KeyVerdict>>();

  constructor(
    private readonly ledgerUrl: string,
    private readonly now: () => number = Date.now,
  ) {}

  async check(runtimeKey: string): Promise<KeyVerdict> {
    // The secret is not kept as a map key: its hash is enough to recognize it.
    const id = createHash('sha256').update(runtimeKey).digest('hex');
    if ((this.accepted.get(id) ?? 0) > this.now()) return { ok: true };
    // Requests arriving together with the same key share one question to the ledger.
    let pending = this.asking.get(id);
    if (!pending) {
      pending = this.ask(runtimeKey).finally(() => this.asking.delete(id));
      this.asking.set(id, pending);
    }
    const verdict = await pending;
    if (verdict.ok) {
      if (this.accepted.size >= MAX_CACHED) this.accepted.clear();
      this.accepted.set(id, this.now() + AUTH_TTL_MS);
    }
    return verdict;
  }

  private async ask(runtimeKey: string): Promise<KeyVerdict> {
    // No retries: the client that sent the request is waiting, and may try again itself.
    const transport = httpTransport({ baseUrl: this.ledgerUrl, runtimeKey, retries: 0, timeoutMs: 10_000 });
    try {
      await transport.readEffect(PROBE_KEY);
      return { ok: true };
    } catch (error) {
      if (!(error instanceof LedgerApiError)) throw error;
      // Any answer past the key check means the ledger accepted the key: not found, out of scope.
      if (error.status === 404 || error.status === 403) return { ok: true };
      if (error.status === 401) return { ok: false, status: 401, detail: error.message };
      if (error.status === 429)
        return { ok: false, status: 429, detail: `the ledger limits this server for now: ${error.message}` };
      return { ok: false, status: 503, detail: `the ledger could not check the runtime key: ${error.message}` };
    }
  }
}
