// The agent path against its floor, side by side in one run: rounds of the product (the SDK over
// HTTP) and of the floor server (floor-server.ts: a bare node:http server with a pg pool doing an
// INSERT ... ON CONFLICT DO NOTHING to claim and one UPDATE for the outcome with its raw response, two
// POSTs) alternate, and each side's figure is the median of its rounds. Neither side calls a provider:
// both report the same canned raw response, made in process, with the same client (Node's fetch), so
// the difference is what the ledger does per effect that the floor does not (a runtime key, an
// idempotency record, a transition row and an audit entry per change) and nothing else. What the
// ledger adds to an agent that does call a provider is measured apart (addedLatency).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { RawResponse } from '@/lib/sdk/provider.ts';
import type { SandboxProvider } from '@/lib/sdk/sandbox.ts';
import { closedLoop, percentile, type LoadResult } from './harness.ts';

export interface SideBySide {
  rounds: { product: LoadResult; floor: LoadResult }[];
  product: SideFigures;
  floor: SideFigures;
  /** Median effects/s of the product over the floor's (goal: at least 0.5). */
  ratio: number;
  /** Median p50 of the product over the floor's (goal: under 3). */
  p50Ratio: number;
  /** CPU milliseconds per operation by part (proc-cpu.ts), over all rounds of each side; absent
   *  without /proc. */
  cpu?: { product: Record<string, number>; floor: Record<string, number> };
}

export interface SideFigures {
  perSecond: number;
  p50ms: number;
  p95ms: number;
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

/** The provider's answer both sides report, made in process: what the sandbox answers an accepted
 *  message (its receipt is the message id), so the SDK's classifier reads it as done. */
export function cannedResponse(key: string): RawResponse {
  const body = JSON.stringify({ id: `msg_${key.replace(/[^a-zA-Z0-9]/g, '').slice(-24)}`, status: 'accepted' });
  return {
    status: 201,
    headers: [
      ['content-type', 'application/json'],
      ['content-length', String(Buffer.byteLength(body))],
    ],
    body: new TextEncoder().encode(body),
  };
}

/** One effect the floor's way: claim, then the outcome carrying the raw response (classified by the
 *  same classifier the product's SDK uses). */
export function floorAgent(floorUrl: string, provider: SandboxProvider, tag: string) {
  return {
    async send(i: number): Promise<void> {
      const key = `${tag}:${i}`;
      const claim = await post(`${floorUrl}/claim`, { key });
      if (claim.status !== 201) throw new Error(`floor claim ${key} lost`);
      const raw = cannedResponse(key);
      const verdict = provider.classify(raw);
      await post(`${floorUrl}/outcome`, {
        key,
        state: verdict.outcome === 'done' ? 'done' : 'unknown',
        receipt: verdict.outcome === 'done' ? verdict.receipt : null,
        response: { status: raw.status, headers: raw.headers, bodyBase64: Buffer.from(raw.body).toString('base64') },
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
  const side = (k: 'product' | 'floor'): SideFigures => ({
    perSecond: median(results.map((x) => x[k].perSecond)),
    p50ms: median(results.map((x) => x[k].p50ms)),
    p95ms: median(results.map((x) => percentile(x[k].samples, 95))),
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

export interface AddedLatency {
  /** Median round of each side: the provider called directly, and through the SDK (claim, the call,
   *  the outcome). */
  direct: SideFigures & { meanMs: number };
  product: SideFigures & { meanMs: number };
  /** What the ledger adds per effect, as the agent sees it: product minus direct, ms. */
  addedP50ms: number;
  addedMeanMs: number;
}

/** What an agent that calls a provider pays for the ledger: the same provider call made directly and
 *  through the SDK, in alternating rounds, each op a fresh effect. */
export async function addedLatency(
  rounds: number,
  perRound: number,
  agents: number,
  product: (i: number) => Promise<void>,
  direct: (i: number) => Promise<void>,
  log: (line: string) => void,
): Promise<AddedLatency> {
  const results: { product: LoadResult; direct: LoadResult }[] = [];
  for (let r = 0; r < rounds; r++) {
    const from = r * perRound;
    const d = await closedLoop(perRound, agents, (i) => direct(from + i));
    const p = await closedLoop(perRound, agents, (i) => product(from + i));
    log(
      `added latency, round ${r + 1}/${rounds}: direct p50 ${d.p50ms.toFixed(1)} ms, through the SDK ${p.p50ms.toFixed(1)} ms`,
    );
    results.push({ product: p, direct: d });
  }
  const mean = (xs: Float64Array) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const side = (k: 'product' | 'direct') => ({
    perSecond: median(results.map((x) => x[k].perSecond)),
    p50ms: median(results.map((x) => x[k].p50ms)),
    p95ms: median(results.map((x) => percentile(x[k].samples, 95))),
    meanMs: median(results.map((x) => mean(x[k].samples))),
  });
  const p = side('product');
  const d = side('direct');
  return { direct: d, product: p, addedP50ms: p.p50ms - d.p50ms, addedMeanMs: p.meanMs - d.meanMs };
}
