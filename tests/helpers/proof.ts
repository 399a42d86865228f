// Runs a proof part (scripts/proof/parts/*.ts) at reduced scale inside vitest and asserts what the
// full `npm run proof` asserts: zero lost, zero duplicated, zero unauthorized, every row tried.
import { expect } from 'vitest';
import type { ProofPart, ProofSection } from '@/scripts/proof/section.ts';
import { createTestDatabase } from './db.ts';

export async function runReducedProof(part: ProofPart): Promise<ProofSection> {
  const section = await part({
    scale: 'reduced',
    newDatabase: async () => {
      const t = await createTestDatabase();
      return { ownerUrl: t.ownerUrl, appUrl: t.appUrl };
    },
    log: () => {},
  });
  expect(section.rows.length).toBeGreaterThan(0);
  for (const row of section.rows) {
    expect.soft(row.trials, `${row.tried}: trials`).toBeGreaterThan(0);
    expect.soft(row.lost, `${row.tried}: lost`).toBe(0);
    expect.soft(row.duplicated, `${row.tried}: duplicated`).toBe(0);
    expect.soft(row.unauthorized, `${row.tried}: unauthorized`).toBe(0);
  }
  return section;
}
