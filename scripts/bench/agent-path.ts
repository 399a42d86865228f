// The agent path against its floor, side by side in one run: rounds of the product (the SDK over
// HTTP) and of the floor server (floor-server.ts: a bare node:http server with a pg pool doing an
// INSERT ... ON CONFLICT DO NOTHING and two UPDATEs per effect, three POSTs) alternate, and each side's
// figure is the median of its rounds. Both sides make the same sandbox provider call per effect, with
// the same client (Node's fetch), so the difference is what the ledger does per effect that the floor
// does not: a runtime key, an idempotency record, a transition row and an audit entry per change.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SandboxProvider } from '@/lib/sdk/sandbox.ts';
import { closedLoop, type LoadResult } from './harness.ts';

export interface SideBySide {
  rounds: { product: LoadResult; floor: LoadResult }[];
  product: { perSecond: number; p50ms: number };
  floor: { perSecond: number; p50ms: number };
  /** Median effects/s of the product over the floor's (goal: at least 0.5). */
  ratio: number;
  /** Median p50 of the product over the floor's (goal: under 3). */
  p50Ratio: number;
  /** CPU milliseconds per operation by part (proc-cpu.ts), over all rounds of each side; absent
   *  without /proc. */
  cpu?: { product: Record<string, number>; floor: Record<string, number> };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** The floor server in its own process, like the product's API server. */
export async function startFloor(
  appUrl: string,
  connections: number,
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./floor-server.ts', import.meta.url)), appUrl, String(connections)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return {
    url: (JSON.parse(line) as { url: string }).url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** One effect the floor's way: claim, the provider call, the raw response, the outcome. */
export function floorAgent(floorUrl: string, provider: SandboxProvider, tag: string) {
  return {
    async send(i: number): Promise<void> {
      const key = `${tag}:${i}`;
      const claim = await post(`${floorUrl}/claim`, { key });
      if (claim.status !== 201) throw new Error(`floor claim ${key} lost`);
      const raw = await provider.send({
        key,
        epoch: 1,
        idempotencyKey: `floor-${key}`,
        target: `floor-${tag}-${i}@example.com`,
        payload: { subject: 'Welcome aboard', body: `Hello ${i}` },
      });
      const verdict = provider.classify(raw);
      await post(`${floorUrl}/response`, {
        key,
        status: raw.status,
        headers: raw.headers,
        bodyBase64: Buffer.from(raw.body).toString('base64'),
      });
      await post(`${floorUrl}/outcome`, {
        key,
        state: verdict.outcome === 'done' ? 'done' : 'unknown',
        receipt: verdict.outcome === 'done' ? verdict.receipt : null,
      });
    },
    async replay(i: number): Promise<void> {
      const claim = await post(`${floorUrl}/claim`, { key: `${tag}:${i}` });
      if (claim.status !== 200) throw new Error(`floor replay of ${tag}:${i} was not skipped`);
    },
  };
}

const perOperation = (ms: Record<string, number>, n: number) =>
  Object.fromEntries(Object.entries(ms).map(([part, total]) => [part, total / n]));

/** `rounds` alternating rounds of `perRound` operations per side; index i of each side is fresh. */
export async function sideBySide(
  rounds: number,
  perRound: number,
  agents: number,
  product: (i: number) => Promise<void>,
  floor: (i: number) => Promise<void>,
  log: (line: string) => void,
  meter?: () => Record<string, number>,
): Promise<SideBySide> {
  const results: SideBySide['rounds'] = [];
  const spent = { product: {} as Record<string, number>, floor: {} as Record<string, number> };
  const measured = async (side: 'product' | 'floor', work: () => Promise<LoadResult>) => {
    const before = meter?.();
    const result = await work();
    const after = meter?.();
    if (before && after)
      for (const [part, ms] of Object.entries(after)) spent[side][part] = (spent[side][part] ?? 0) + ms - before[part]!;
    return result;
  };
  for (let r = 0; r < rounds; r++) {
    const from = r * perRound;
    const p = await measured('product', () => closedLoop(perRound, agents, (i) => product(from + i)));
    const f = await measured('floor', () => closedLoop(perRound, agents, (i) => floor(from + i)));
    log(`round ${r + 1}/${rounds}: product ${p.perSecond.toFixed(0)}/s, floor ${f.perSecond.toFixed(0)}/s`);
    results.push({ product: p, floor: f });
  }
  const side = (k: 'product' | 'floor') => ({
    perSecond: median(results.map((x) => x[k].perSecond)),
    p50ms: median(results.map((x) => x[k].p50ms)),
  });
  const productSide = side('product');
  const floorSide = side('floor');
  return {
    rounds: results,
    product: productSide,
    floor: floorSide,
    ratio: productSide.perSecond / floorSide.perSecond,
    p50Ratio: productSide.p50ms / floorSide.p50ms,
    cpu: meter
      ? { product: perOperation(spent.product, rounds * perRound), floor: perOperation(spent.floor, rounds * perRound) }
      : undefined,
  };
}
