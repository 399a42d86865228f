// The ledgered MCP server over stdio (the runtime key from the process's configuration) and over
// Streamable HTTP (stateless; each request brings its runtime key as `Authorization: Bearer elk_...`
// and gets a server whose ledger speaks with that key, so its scope is the key's, never an argument's).
// Over HTTP a request is served only once its Host and Origin are this server's and the ledger has
// accepted its key (http-door.ts).
import http from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, InitializeRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { createLedger } from '../client.ts';
import { LedgerApiError } from '../errors.ts';
import { httpTransport } from '../http.ts';
import type { CreateRunRequest } from '../types.ts';
import { allowedHostsFor, rebindingProblem, RuntimeKeyCheck } from './http-door.ts';
import { createLedgerMcpServer, type LedgerMcpOptions } from './server.ts';

export interface McpStdioOptions extends Omit<LedgerMcpOptions, 'run'> {
  /** The run these calls belong to: its id, a function returning the current one, or `{ create }`:
   *  the run to create (ledger.createRun) when the server starts. */
  run: LedgerMcpOptions['run'] | { create: CreateRunRequest };
}

/** Why the server could not start, in words for the person reading the MCP client's error. */
export function startFailure(error: unknown): string {
  const prefix = 'the effect-ledger MCP server could not start';
  if (!(error instanceof LedgerApiError)) return `${prefix}: ${error instanceof Error ? error.message : String(error)}`;
  const what =
    error.code === 'unauthenticated'
      ? 'the ledger did not accept the runtime key (LEDGER_KEY)'
      : error.code === 'forbidden'
        ? "the runtime key is not scoped to the run's workflow"
        : ['network', 'timeout', 'aborted'].includes(error.code)
          ? 'the ledger could not be reached'
          : 'the ledger refused the start';
  return `${prefix}: ${what} (${error.code}${error.status ? ` ${error.status}` : ''}): ${error.message}`;
}

/**
 * Serves the tools over stdio. The ledger is asked first (the run created or read, which proves the
 * key and the ledger's address); when that fails the process does not exit, which an MCP client
 * could only report as a closed connection: it answers the client's `initialize` with an MCP error
 * naming the cause, and stops when the client goes away.
 */
export async function serveStdio(options: McpStdioOptions): Promise<void> {
  let run: LedgerMcpOptions['run'];
  try {
    run = await startRun(options);
  } catch (error) {
    await serveStartFailure(startFailure(error));
    return;
  }
  await createLedgerMcpServer({ ...options, run }).connect(new StdioServerTransport());
}

async function startRun(options: McpStdioOptions): Promise<LedgerMcpOptions['run']> {
  const { run, ledger } = options;
  if (typeof run === 'object') return (await ledger.createRun(run.create)).runId;
  await ledger.readRun(typeof run === 'function' ? run() : run);
  return run;
}

async function serveStartFailure(cause: string): Promise<void> {
  process.stderr.write(`${cause}\n`);
  const server = new Server({ name: 'effect-ledger', version: '1.0.0' }, { capabilities: {} });
  server.setRequestHandler(InitializeRequestSchema, () => {
    throw new McpError(ErrorCode.InternalError, cause);
  });
  await server.connect(new StdioServerTransport());
}

export interface McpHttpOptions extends Omit<LedgerMcpOptions, 'ledger'> {
  /** The ledger's base URL (the /api/v1 prefix is added). */
  ledgerUrl: string;
  port?: number;
  host?: string;
  /** Default /mcp. */
  path?: string;
  /** Host header values to answer to besides the listen address's names, as sent ("mcp.internal:8080"). */
  allowedHosts?: string[];
  /** Origins of browser pages allowed to call the server besides its own ("https://mcp.internal"). */
  allowedOrigins?: string[];
}

function bearer(req: http.IncomingMessage): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
}

function refuse(res: http.ServerResponse, status: number, detail: string) {
  res.writeHead(status, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="effect-ledger"' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: detail }, id: null }));
}

export async function serveHttp(options: McpHttpOptions): Promise<{ url: string; close(): Promise<void> }> {
  const path = options.path ?? '/mcp';
  const listen = options.host ?? '127.0.0.1';
  const keys = new RuntimeKeyCheck(options.ledgerUrl);
  // Known once the server listens (port 0 picks one).
  let hosts: string[] = [];
  let origins: string[] = [];
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path)
      return refuse(res, 404, `MCP is served at ${path}`);
    const rebinding = rebindingProblem(req, hosts, origins);
    if (rebinding) return refuse(res, 403, rebinding);
    const runtimeKey = bearer(req);
    if (!runtimeKey) return refuse(res, 401, 'send the runtime key as "Authorization: Bearer elk_..."');
    const verdict = await keys.check(runtimeKey);
    if (!verdict.ok) return refuse(res, verdict.status, verdict.detail);
    const ledger = createLedger(httpTransport({ baseUrl: options.ledgerUrl, runtimeKey }));
    const mcp = createLedgerMcpServer({ ...options, ledger });
    // The SDK's own Host and Origin check too, with the same lists.
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts: hosts,
      allowedOrigins: origins,
    });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  };
  const server = http.createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, listen, resolve));
  const { port } = server.address() as AddressInfo;
  hosts = allowedHostsFor(listen, port, options.allowedHosts);
  origins = [...hosts.map((h) => `http://${h}`), ...(options.allowedOrigins ?? [])];
  return {
    url: `http://${isIP(listen) === 6 ? `[${listen}]` : listen}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
