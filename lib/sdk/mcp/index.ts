// `@effect-ledger/sdk/mcp`: the team's registered tools as ledgered MCP tools, plus get_effect.
export { createLedgerMcpServer, defineMcpTool, type LedgeredMcpTool, type LedgerMcpOptions } from './server.ts';
export { serveHttp, serveStdio, type McpHttpOptions, type McpStdioOptions } from './transports.ts';
export { currentEffect, currentEffectOrNull, EffectHeldError, type EffectHold } from '../adapters/guard.ts';
