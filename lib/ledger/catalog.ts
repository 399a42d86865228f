// Tool definitions and run identities, read on every claim. Tool definitions are cached for a few
// seconds (an admin's change applies within TOOL_CACHE_MS); a run's workflow and trigger never
// change, so they are cached for the life of the process.
import { sqlPool, type DbOrTx } from '../db/client.ts';
import { notFound } from './errors.ts';
import type { TargetType } from './normalize.ts';

export interface ToolInfo {
  name: string;
  actions: string[];
  targetType: TargetType;
  provider: string;
  generatedInputs: string[];
  supportsIdempotencyKey: boolean;
  supportsReceiptLookup: boolean;
  settleWindowSeconds: number;
  leaseSeconds: number;
  fourEyesBump: boolean;
  fourEyesReplay: boolean;
  distinctApprover: boolean;
}

export interface RunInfo {
  id: string;
  workflow: string;
  triggerId: string;
}

const TOOL_CACHE_MS = 5_000;
const tools = new Map<string, { at: number; tool: ToolInfo | null }>();
const runs = new Map<string, RunInfo>();
const RUN_CACHE_MAX = 50_000;

// When an entry expires under load, every request in flight would read the same row at once: they
// share one read instead (per tool name, on the root client; a transaction reads on its own).
const reading = new WeakMap<object, Map<string, Promise<ToolInfo | null>>>();

export async function getTool(db: DbOrTx, name: string): Promise<ToolInfo> {
  const hit = tools.get(name);
  if (hit && Date.now() - hit.at < TOOL_CACHE_MS && hit.tool) return hit.tool;
  const pool = sqlPool(db);
  const shared = pool && (reading.get(pool) ?? reading.set(pool, new Map()).get(pool)!);
  let read = shared ? shared.get(name) : undefined;
  if (!read) {
    read = db.toolDefinition.findUnique({ where: { name } }).then((row) => {
      const tool = row ? (row as ToolInfo) : null;
      tools.set(name, { at: Date.now(), tool });
      return tool;
    });
    if (shared) {
      shared.set(name, read);
      void read.finally(() => shared.delete(name)).catch(() => undefined);
    }
  }
  const tool = await read;
  if (!tool) throw notFound(`tool "${name}" is not registered`, { field: 'tool' });
  return tool;
}

export async function getRun(db: DbOrTx, runId: string): Promise<RunInfo> {
  const hit = runs.get(runId);
  if (hit) return hit;
  const run = await db.run.findUnique({
    where: { id: runId },
    select: { id: true, workflow: true, event: { select: { triggerId: true } } },
  });
  if (!run) throw notFound(`run ${runId} does not exist`, { field: 'runId' });
  const info = { id: run.id, workflow: run.workflow, triggerId: run.event.triggerId };
  if (runs.size >= RUN_CACHE_MAX) runs.clear();
  runs.set(runId, info);
  return info;
}

/** After an admin edits a tool definition in this process. */
export function forgetTool(name: string): void {
  tools.delete(name);
}
