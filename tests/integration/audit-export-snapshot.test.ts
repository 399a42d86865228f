// A5: an export is one snapshot of the trail. Ids are drawn when an entry is inserted, not when it
// commits, so an entry can commit after the export has read past its id; the export must then leave
// out that entry and everything appended to its chain after it, not hold a later seq without it.
// A2: an export of the whole trail says so (neither filtered nor scoped), so a chain whose first
// entries the owner deleted fails verification instead of passing as partial.
import { describe, expect, it } from 'vitest';
import { appendAudit } from '@/lib/audit/append.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';
import { auditExportStream, exportSummary, jsonLine, type ExportedEntry } from '@/lib/read-models/audit-export.ts';
import { verifyExport } from '@/lib/sdk/audit/verify-export.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, suffix, userActor } from '../helpers/factories.ts';

const admin = userActor('admin');
const append = (db: Parameters<typeof appendAudit>[0], chain: string, i: number) =>
  appendAudit(db, {
    chain,
    actor: admin,
    action: 'user.create',
    subjectType: 'user',
    subjectId: chain,
    detail: { i },
  });

async function maxId(t: TestDatabase): Promise<bigint> {
  return BigInt((await t.owner<{ max: string }>('SELECT max(id)::text AS max FROM audit_entry')).rows[0]!.max);
}

const openTransactions = async (t: TestDatabase) =>
  Number(
    (
      await t.owner<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND state LIKE 'idle in transaction%'`,
        [t.name],
      )
    ).rows[0]!.n,
  );

describe('A5: the audit export reads one snapshot', () => {
  it('A5: an entry that commits while the export runs, below the id it has read past, is left out with the later seqs of its chain, and the export verifies', async () => {
    const t = await createTestDatabase({ poolSize: 8 });
    const chain = `user:late-${suffix()}`;
    await append(t.db, chain, 1);
    const beforeLate = await maxId(t);

    // Seq 2 of the chain draws its id now and commits only when the test says so.
    let commitLate!: () => void;
    let appended!: () => void;
    const inserted = new Promise<void>((resolve) => (appended = resolve));
    const late = t.db.$transaction(
      async (tx) => {
        await append(tx, chain, 2);
        appended();
        await new Promise<void>((resolve) => (commitLate = resolve));
      },
      { timeout: 60_000 },
    );
    await inserted;
    // Entries with higher ids that commit at once (other chains).
    for (let i = 0; i < 3; i++) await makeEffect(t.db, 'done');

    const summary = exportSummary(false, EVERY_WORKFLOW);
    const exported: ExportedEntry[] = [];
    const rows = auditExportStream(t.db, {}, EVERY_WORKFLOW, { batch: 2 });
    // Read until the export has passed the late entry's id (every entry above beforeLate is above it).
    for (;;) {
      const next = await rows.next();
      if (next.done) throw new Error('the export ended before it passed the late entry');
      exported.push(next.value);
      if (BigInt(next.value.id) > beforeLate) break;
    }
    commitLate();
    await late;
    await append(t.db, chain, 3);
    for await (const e of rows) exported.push(e);

    expect(exported.filter((e) => e.chain === chain).map((e) => e.seq)).toEqual([1]);
    for (const e of exported) summary.add(e);
    const text = exported.map(jsonLine).join('') + summary.line();
    expect(verifyExport(text)).toMatchObject({ ok: true, entries: exported.length, partial: [] });
    expect(await openTransactions(t)).toBe(0);

    // A later export holds the chain whole.
    const again: ExportedEntry[] = [];
    for await (const e of auditExportStream(t.db, {}, EVERY_WORKFLOW, { batch: 2 })) again.push(e);
    expect(again.filter((e) => e.chain === chain).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('A5: a consumer that stops early ends the export transaction and gives its connection back', async () => {
    const t = await createTestDatabase({ poolSize: 1 });
    for (let i = 0; i < 3; i++) await append(t.db, `user:early-${suffix()}`, i);
    const rows = auditExportStream(t.db, {}, EVERY_WORKFLOW, { batch: 2 });
    expect((await rows.next()).done).toBe(false);
    expect(await openTransactions(t)).toBe(1);
    await rows.return(undefined);
    expect(await openTransactions(t)).toBe(0);
    // The pool's only connection is usable again.
    expect(await t.db.auditEntry.count()).toBeGreaterThanOrEqual(3);
  });

  it('A2: the owner deletes the first entries of a chain: the export of the whole trail fails verification at that chain; a scoped export says it is scoped', async () => {
    const t = await createTestDatabase({ poolSize: 4 });
    const chain = `user:start-${suffix()}`;
    for (let i = 1; i <= 3; i++) await append(t.db, chain, i);
    await makeEffect(t.db, 'done');
    const exportText = async () => {
      const summary = exportSummary(false, EVERY_WORKFLOW);
      let text = '';
      for await (const e of auditExportStream(t.db, {}, EVERY_WORKFLOW)) {
        summary.add(e);
        text += jsonLine(e);
      }
      return text + summary.line();
    };
    const whole = await exportText();
    expect(JSON.parse(whole.trim().split('\n').at(-1)!)).toMatchObject({ export: { filtered: false, scoped: false } });
    expect(verifyExport(whole)).toMatchObject({ ok: true, partial: [] });

    await t.owner('ALTER TABLE audit_entry DISABLE TRIGGER USER');
    try {
      await t.owner('DELETE FROM audit_entry WHERE chain = $1 AND seq < 3', [chain]);
    } finally {
      await t.owner('ALTER TABLE audit_entry ENABLE TRIGGER USER');
    }
    expect(verifyExport(await exportText())).toMatchObject({
      ok: false,
      chain,
      seq: 3,
      problem: expect.stringMatching(/starts at seq 3/),
    });

    const scoped = exportSummary(false, { all: false, workflows: ['some-workflow'] });
    expect(JSON.parse(scoped.line())).toMatchObject({ export: { filtered: false, scoped: true } });
  });
});
