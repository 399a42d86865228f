// A5: the audit filter as auditors use it. The action filter matches any part of the action's name
// (not only its start), LIKE's wildcards are taken literally, and an inverted date range is named
// as the problem (the export refuses it with a 422 naming "to") instead of silently matching nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { appendAudit } from '@/lib/audit/append.ts';
import { auditFilterProblem, auditPage, exportRequestFrom } from '@/lib/read-models/audit.ts';
import { LedgerError } from '@/lib/core/errors.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';

let t: TestDatabase;
const actor = { kind: 'system' as const, id: 'test', label: 'test' };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  for (const action of ['effect.revoke', 'runtime_key.revoke', 'user.create', 'effect.resolve_sent'] as const) {
    await appendAudit(t.db, {
      chain: `test:${action}`,
      actor,
      action,
      subjectType: 'audit',
      subjectId: action,
    } as never);
  }
});

const actions = async (action: string) =>
  (await auditPage(t.db, { action }, EVERY_WORKFLOW)).rows.map((r) => r.action).sort();

describe('audit filter', () => {
  it('A5: the action filter matches anywhere in the name, with % and _ taken literally', async () => {
    expect(await actions('revoke')).toEqual(['effect.revoke', 'runtime_key.revoke']);
    expect(await actions('REVOKE')).toEqual(['effect.revoke', 'runtime_key.revoke']);
    expect(await actions('effect.')).toEqual(['effect.resolve_sent', 'effect.revoke']);
    expect(await actions('resolve_sent')).toEqual(['effect.resolve_sent']);
    expect(await actions('%')).toEqual([]);
    expect(await actions('e_fect')).toEqual([]);
  });

  it('A5: an inverted date range is named on the page and refused by the export (422 on "to")', async () => {
    expect(auditFilterProblem({ from: '2026-12-02T10:00', to: '2026-12-01T10:00' })).toMatchObject({ field: 'to' });
    expect(auditFilterProblem({ from: '2026-12-01T10:00', to: '2026-12-02T10:00' })).toBeNull();
    expect(auditFilterProblem({ from: '2026-12-01T10:00' })).toBeNull();
    const error = (() => {
      try {
        exportRequestFrom(new URLSearchParams({ from: '2026-12-02T10:00', to: '2026-12-01T10:00' }));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LedgerError);
    expect(error).toMatchObject({ code: 'validation', details: { field: 'to' } });
    expect((error as Error).message).toContain('must be later than');
  });
});
