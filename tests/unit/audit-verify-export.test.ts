// A2: the offline verifier of an audit export. An export neither filtered nor scoped must hold every
// chain from seq 1 (one whose start was cut off is named), while older exports, which do not say
// whether they were scoped, verify as before. `npm run audit:verify` reads the file line by line:
// the same result as verifyExport on the whole text, for a file larger than its heap.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  canonicalV2,
  canonicalV2Shaped,
  entryHash,
  GENESIS_HASH,
  shapedEntryHash,
  type ExportedEntry,
} from '@/lib/sdk/audit/canonical.ts';
import { MAX_LINE_BYTES, verifyExport, verifyExportStream, type ExportSummary } from '@/lib/sdk/audit/verify-export.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'audit-verify-export-'));

/** Entries of a few chains, in the order an export writes them, each hashed as the database does. */
function trail(n: number, chains = 3, detail: Record<string, unknown> = {}): ExportedEntry[] {
  const heads = new Map<string, { seq: number; hash: string }>();
  const out: ExportedEntry[] = [];
  for (let i = 1; i <= n; i++) {
    const chain = `user:${i % chains}`;
    const head = heads.get(chain) ?? { seq: 0, hash: GENESIS_HASH };
    const e: ExportedEntry = {
      id: String(i), version: 2, chain, seq: head.seq + 1, prev_hash: head.hash, hash: '',
      at: '2026-12-02T10:00:00.123456Z', actor_kind: 'user', actor_id: 'u1', actor_label: 'Ada',
      actor_role: 'admin', action: 'user.create', subject_type: 'user', subject_id: chain, run_id: null,
      before_state: null, after_state: null, reason: null, outcome: 'ok', detail: { i, note: 'ü', ...detail },
      ip: null, user_agent: null, request_id: null,
    }; // prettier-ignore
    e.hash = entryHash(e);
    heads.set(chain, { seq: e.seq, hash: e.hash });
    out.push(e);
  }
  return out;
}

/** The export's text with a summary that agrees with its entries; `flags` are the summary's own. */
function exportText(entries: ExportedEntry[], flags: { filtered: boolean; scoped?: boolean }): string {
  const chains: ExportSummary['export']['chains'] = {};
  for (const e of entries) {
    const c = (chains[e.chain] ??= { first_seq: e.seq, last_seq: e.seq, entries: 0 });
    c.first_seq = Math.min(c.first_seq, e.seq);
    c.last_seq = Math.max(c.last_seq, e.seq);
    c.entries++;
  }
  const summary = { export: { format: 'effect-ledger-audit', version: 2, ...flags, entries: entries.length, chains } };
  return [...entries, summary].map((x) => JSON.stringify(x)).join('\n') + '\n';
}

/** Drops the first two entries of chain user:1: its start is cut off. */
const withoutStart = (entries: ExportedEntry[]) => entries.filter((e) => !(e.chain === 'user:1' && e.seq <= 2));

function cli(file: string, heapMb?: number): Promise<{ code: number | null; output: string }> {
  const heap = heapMb ? [`--max-old-space-size=${heapMb}`] : [];
  return new Promise((resolve) => {
    const child = spawn('node', [...heap, '--import', 'tsx', 'scripts/audit-verify.ts', file], { cwd: process.cwd() });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

const save = (name: string, text: string | Buffer) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};

describe('A2: an export must hold its chains from seq 1 unless it says it was cut', () => {
  const entries = trail(12);

  it('A2: an export neither filtered nor scoped whose chain lost its first entries fails, naming the chain', () => {
    expect(verifyExport(exportText(entries, { filtered: false, scoped: false }))).toMatchObject({
      ok: true,
      partial: [],
    });
    const cut = withoutStart(entries);
    const firstLeft = cut.find((e) => e.chain === 'user:1')!;
    expect(verifyExport(exportText(cut, { filtered: false, scoped: false }))).toMatchObject({
      ok: false,
      line: cut.indexOf(firstLeft) + 1,
      id: firstLeft.id,
      chain: 'user:1',
      seq: 3,
      problem: expect.stringMatching(/starts at seq 3/),
    });
  });

  it('A2: a scoped export, a filtered one and an older one without the scoped flag report such a chain as partial and verify', () => {
    const cut = withoutStart(entries);
    const partial = [{ chain: 'user:1', first_seq: 3, last_seq: 4 }];
    for (const flags of [{ filtered: false, scoped: true }, { filtered: true, scoped: false }, { filtered: false }])
      expect(verifyExport(exportText(cut, flags)), JSON.stringify(flags)).toMatchObject({ ok: true, partial });
  });
});

describe('A2: npm run audit:verify reads the export line by line', () => {
  it('A2: the streamed verification gives what verifyExport gives, line numbers included, whatever the pieces', async () => {
    const good = exportText(trail(40), { filtered: false, scoped: false });
    const lines = good.split('\n');
    const truncated = lines.slice(0, 30).join('\n');
    lines[17] = lines[17]!.replace('"reason":null', '"reason":"changed"');
    const cases = [good, lines.join('\n'), good.trimEnd(), truncated, good + '\n\n'];
    for (const text of cases) {
      const whole = verifyExport(text);
      for (const size of [1, 7, 4096]) {
        const pieces = async function* () {
          for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
        };
        expect(await verifyExportStream(pieces())).toEqual(whole);
      }
    }
    expect(verifyExport(lines.join('\n'))).toMatchObject({ ok: false, line: 18 });
    expect(verifyExport(truncated)).toMatchObject({ ok: false, line: 30, problem: expect.stringMatching(/truncated/) });
  });

  it('A2: verifies an export larger than its heap, and names the same broken line as verifyExport', async () => {
    // About 40 MB; a heap of 32 MB cannot hold the file as one string, only line by line.
    const entries = trail(5000, 7, { filler: 'x'.repeat(8000) });
    const good = exportText(entries, { filtered: false, scoped: false });
    const ok = await cli(save('big.jsonl', good), 32);
    expect(ok.output).toContain('OK: 5000 entries in 7 chains verify');
    expect(ok.code).toBe(0);

    const lines = good.split('\n');
    const victim = JSON.parse(lines[4321]!) as ExportedEntry;
    lines[4321] = JSON.stringify({ ...victim, reason: 'rewritten' });
    const tampered = lines.join('\n');
    expect(verifyExport(tampered)).toMatchObject({ ok: false, line: 4322, id: victim.id });
    const broken = await cli(save('big-tampered.jsonl', tampered), 32);
    expect(broken.output).toContain(
      `BROKEN at line 4322: entry ${victim.id} (chain ${victim.chain}, seq ${victim.seq}): content does not match its hash`,
    );
    expect(broken.code).toBe(1);
  }, 120_000);
});

describe('A2: the verifier reads strict input and names the line it refuses', () => {
  const entries = trail(6);
  const good = exportText(entries, { filtered: false, scoped: false });
  const lines = good.split('\n'); // the last one is the empty string after the final line break
  const withLine = (at: number, text: string) => [...lines.slice(0, at), text, ...lines.slice(at + 1)].join('\n');
  const entry3 = lines[2]!;
  const cases: [string, string | Buffer, number, RegExp][] = [
    ['a duplicate member name', withLine(2, entry3.replace('{', '{"chain":"user:9",')), 3, /"chain" appears twice/],
    ['a duplicate inside the detail', withLine(2, entry3.replace('"detail":{', '"detail":{"i":1,')), 3, /"i" appears twice/],
    ['an escaped lone surrogate', withLine(2, entry3.replace('"ü"', '"\\ud800"')), 3, /lone surrogate/],
    ['a byte-order mark', '\ufeff' + good, 1, /byte-order mark/],
    ['a blank line', withLine(3, '\n' + lines[3]), 4, /blank line/],
    ['a summary first', [lines[6], ...lines.slice(0, 6), ''].join('\n'), 2, /after the export summary \(line 1\)/],
    ['a repeated summary', [...lines.slice(0, 7), lines[6], ''].join('\n'), 8, /after the export summary \(line 7\)/],
    ['{"export":null}', withLine(6, '{"export":null}'), 7, /summary is not shaped/],
    ['a summary without chains', withLine(6, lines[6]!.replace(/,"chains".*\}\}$/, '}}')), 7, /summary is not shaped/],
    ['an entry that is an array', withLine(2, '[1,2]'), 3, /not an audit entry/],
    ['an entry whose seq is text', withLine(2, entry3.replace(/"seq":(\d+)/, '"seq":"$1"')), 3, /seq not as the export writes/],
    ['an entry without its hash', withLine(2, entry3.replace(/,"hash":"[0-9a-f]+"/, '')), 3, /hash missing/],
    ['a number beyond a double', withLine(2, entry3.replace('"detail":{', '"detail":{"big":1e400,')), 3, /too large/],
    ['a number beyond a double without an exponent', withLine(2, entry3.replace('"detail":{', `"detail":{"big": -${'9'.repeat(310)},`)), 3, /too large/],
    ['a number beyond a double in an array', withLine(2, entry3.replace('"detail":{', '"detail":{"big":[1, 12.5E+308],')), 3, /too large/],
    ['an escaped lone low surrogate in a name', withLine(2, entry3.replace('"detail":{', '"detail":{"\\uDC01":1,')), 3, /lone surrogate/],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from(lines.slice(0, 2).join('\n') + '\n'), Buffer.from(entry3.replace('ü', 'XX')).map((b, i, a) => (a[i - 1] === 0x58 && b === 0x58 ? 0xc3 : b)), Buffer.from('\n' + lines.slice(3).join('\n'))]),
      3,
      /not valid UTF-8/,
    ],
  ]; // prettier-ignore

  it.each(cases)(
    'A2: %s is refused at its line, by the library and by npm run audit:verify (exit 1)',
    async (name, text, line, problem) => {
      const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
      const pieces = async function* () {
        for (let i = 0; i < bytes.length; i += 5) yield bytes.subarray(i, i + 5);
      };
      expect(await verifyExportStream(pieces())).toMatchObject({
        ok: false,
        line,
        problem: expect.stringMatching(problem),
      });
      if (typeof text === 'string') expect(verifyExport(text)).toMatchObject({ ok: false, line });
      const run = await cli(save(`strict-${name.replace(/\W+/g, '-')}.jsonl`, bytes));
      expect(run.output).toMatch(new RegExp(`BROKEN at line ${line}: .*${problem.source}`));
      expect(run.code).toBe(1);
    },
    30_000,
  );

  it('A2: the verifier writes form 2 in a fixed member order: the same text as JCS over the row', () => {
    const details = [null, { b: 1, a: [1e21, -0, 5e-7, 'x'] }, { '\u00e9': { z: true, é: null } }, 'text', 12.25];
    for (const [i, e] of trail(5).entries()) {
      const row = { ...e, detail: details[i], reason: i % 2 ? 'why' : null, run_id: i % 2 ? null : 'r' };
      expect(canonicalV2Shaped(row)).toBe(canonicalV2(row));
      expect(shapedEntryHash(row)).toBe(entryHash(row));
    }
  });

  it('A2: a raw lone surrogate (only a string can hold one; bytes are decoded strictly) is refused at its line', () => {
    expect(verifyExport(withLine(2, entry3.replace('"ü"', '"\ud800"')))).toMatchObject({
      ok: false,
      line: 3,
      problem: expect.stringMatching(/lone surrogate/),
    });
  });

  it('A2: a 32 MB line verifies in a few seconds, and a line past the limit is refused with its number', async () => {
    const big = Buffer.from(
      exportText(trail(3, 1, { filler: 'x'.repeat(32 * 1024 * 1024) }), { filtered: false, scoped: false }),
    );
    // CPU time of this process, in 64 KiB pieces as a file stream gives them: the machine's load does not count.
    const pieces = async function* () {
      for (let i = 0; i < big.length; i += 65536) yield big.subarray(i, i + 65536);
    };
    const cpu = process.cpuUsage();
    expect(await verifyExportStream(pieces())).toMatchObject({ ok: true, entries: 3 });
    const used = process.cpuUsage(cpu);
    expect((used.user + used.system) / 1000).toBeLessThan(5_000);
    const ok = await cli(save('long-line.jsonl', big));
    expect(ok.output).toContain('OK: 3 entries in 1 chains verify');
    expect(ok.code).toBe(0);
    const over = trail(1, 1, { filler: 'y'.repeat(MAX_LINE_BYTES) });
    const refused = await cli(save('too-long.jsonl', exportText(over, { filtered: false, scoped: false })));
    expect(refused.output).toContain(
      `BROKEN at line 1: entry ? (chain ?, seq ?): the line is longer than ${MAX_LINE_BYTES} bytes`,
    );
    expect(refused.code).toBe(1);
  }, 120_000);
});
