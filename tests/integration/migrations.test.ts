import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { diffDatabaseToSchema } from '@/lib/db/schema-engine.ts';

describe('migrations', () => {
  it('applying every migration yields exactly schema.prisma (the engine diff is empty)', async () => {
    const t = await createTestDatabase();
    const sql = await diffDatabaseToSchema(t.ownerUrl);
    const statements = sql.split('\n').filter((l) => l.trim() && !l.startsWith('--'));
    expect(statements).toEqual([]);
  });

  it('A3: the app connects as a role that owns no table', async () => {
    const t = await createTestDatabase();
    const rows = await t.db.$queryRaw<{ owned: bigint }[]>`
      SELECT count(*) AS owned FROM pg_tables WHERE schemaname = 'public' AND tableowner = current_user`;
    expect(Number(rows[0]!.owned)).toBe(0);
  });
});
