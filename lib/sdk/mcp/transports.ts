// The ledgered MCP server over stdio (the runtime key from the process's configuration) and over
// Streamable HTTP (stateless; each request brings its runtime key as `Authorization: Bearer elk_...`
// and gets a server whose ledger speaks with that key, so its scope is the key's, never an argument's).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createLedger } from '../client.ts';
import { httpTransport } from '../http.ts';
import { createLedgerMcpServer, type LedgerMcpOptions } from './server.ts';

export async function serveStdio(options: LedgerMcpOptions): Promise<void> {
  await createLedgerMcpServer(options).connect(new StdioServerTransport());
}

export interface McpHttpOptions extends Omit<LedgerMcpOptions, 'ledger'> {
  /** The ledger's base URL (the /api/v1 prefix is added). */
  ledgerUrl: string;
  port?: number;
  host?: string;
  /** Default /mcp. */
  path?: string;
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
  const server = http.createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path)
      return refuse(res, 404, `MCP is served at ${path}`);
    const runtimeKey = bearer(req);
    if (!runtimeKey) return refuse(res, 401, 'send the runtime key as "Authorization: Bearer elk_..."');
    const ledger = createLedger(httpTransport({ baseUrl: options.ledgerUrl, runtimeKey }));
    const mcp = createLedgerMcpServer({ ...options, ledger });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    mcp
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch((error: unknown) => {
        if (!res.headersSent) refuse(res, 500, error instanceof Error ? error.message : String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
