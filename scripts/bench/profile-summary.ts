// Where a process's CPU time went, from a V8 CPU profile (`node --cpu-prof`): self time grouped by
// package (node_modules/<name>), project folder, or V8/Node internals, and the heaviest functions.
// `node --import tsx scripts/bench/profile-summary.ts <file.cpuprofile> [top]` prints a Markdown table.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShare {
  name: string;
  ms: number;
  share: number;
}

/** The place a frame's code lives: a package, a project folder, or the runtime itself. */
export function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const project = /\/(app|lib|scripts|components)\/(.*?)(\/[^/]+)?$/.exec(url);
  if (project) return `${project[1]}/${project[2]!.split('/')[0]}`;
  return url.split('/').slice(-1)[0]!;
}

export function summarize(
  profile: CpuProfile,
  top = 12,
): { total: number; byPlace: ProfileShare[]; byFunction: ProfileShare[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const place = placeOf(url, functionName);
    places.set(place, (places.get(place) ?? 0) + ms);
    const fn = `${functionName || '(anonymous)'} ${place}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(fn, (functions.get(fn) ?? 0) + ms);
  }
  const rank = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms, share: total ? ms / total : 0 }));
  return { total, byPlace: rank(places), byFunction: rank(functions) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CpuProfile;
  const { total, byPlace, byFunction } = summarize(profile, Number(process.argv[3] ?? 15));
  const pct = (s: number) => `${(s * 100).toFixed(1)}%`;
  console.log(`Sampled ${(total / 1000).toFixed(1)} s of CPU.\n\n| where | ms | share |\n|---|---:|---:|`);
  for (const p of byPlace) console.log(`| ${p.name} | ${p.ms.toFixed(0)} | ${pct(p.share)} |`);
  console.log(`\n| function | ms | share |\n|---|---:|---:|`);
  for (const f of byFunction) console.log(`| ${f.name} | ${f.ms.toFixed(0)} | ${pct(f.share)} |`);
}
