// The set a four-eyes epoch bump covers (Z3, E2): which of the asked keys may be bumped now (done,
// revoked or stuck), which are blocked and why, whether the tools involved want a second operator, and
// the SHA-256 of the exact (key, epoch) set an approval is bound to.
import { createHash } from 'node:crypto';
import type { Db } from '../db/client.ts';

export interface BumpItem {
  key: string;
  epoch: number;
}

export function setHash(items: readonly BumpItem[]): string {
  const h = createHash('sha256');
  for (const line of items.map((i) => `${i.key}\u0000${i.epoch}`).sort()) h.update(line).update('\n');
  return h.digest('hex');
}

export interface BumpPreview {
  eligible: (BumpItem & { state: string; target: string; tool: string })[];
  blocked: { key: string; state: string; why: string }[];
  missing: string[];
  fourEyes: boolean;
  setHash: string;
}

/** What a bump of these keys would do, without doing it (the preview the operator confirms). */
export async function previewBump(db: Db, keys: readonly string[]): Promise<BumpPreview> {
  const unique = [...new Set(keys)];
  const rows = await db.effectKey.findMany({
    where: { key: { in: unique } },
    select: { key: true, state: true, currentEpoch: true, target: true, tool: true },
  });
  const found = new Map(rows.map((r) => [r.key, r]));
  const eligible: BumpPreview['eligible'] = [];
  const blocked: BumpPreview['blocked'] = [];
  for (const r of rows) {
    if (r.state === 'done' || r.state === 'revoked' || r.state === 'stuck')
      eligible.push({ key: r.key, epoch: r.currentEpoch, state: r.state, target: r.target, tool: r.tool });
    else
      blocked.push({
        key: r.key,
        state: r.state,
        why: `${r.state} blocks a bump (E2): only done, revoked or stuck can be superseded`,
      });
  }
  const tools = [...new Set(eligible.map((e) => e.tool))];
  const lax = await db.toolDefinition.count({ where: { name: { in: tools }, fourEyesBump: false } });
  return {
    eligible,
    blocked,
    missing: unique.filter((k) => !found.has(k)),
    fourEyes: tools.length === 0 || lax < tools.length,
    setHash: setHash(eligible),
  };
}
