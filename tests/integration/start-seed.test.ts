// `npm start` is the demo: it wrote demo people and the crashed demo campaign into any database
// without runs, also one named by DATABASE_URL, which may be anybody's. The demo data now goes into
// the embedded database `npm start` runs itself, into another one only when asked (--seed-demo), and
// never under NODE_ENV=production; an empty database of its own still gets the first admin.
import { describe, expect, it } from 'vitest';
import { FIRST_ADMIN_EMAIL } from '@/lib/auth/bootstrap.ts';
import { demoSeedWanted, seedIfEmpty } from '@/scripts/seed.ts';
import { createTestDatabase } from '../helpers/db.ts';

describe('what npm start seeds', () => {
  it('demo data: the embedded database always; another only when asked; none under NODE_ENV=production', () => {
    expect(demoSeedWanted({ embedded: true, asked: false, production: false })).toBe(true);
    expect(demoSeedWanted({ embedded: false, asked: false, production: false })).toBe(false);
    expect(demoSeedWanted({ embedded: false, asked: true, production: false })).toBe(true);
    for (const embedded of [true, false])
      for (const asked of [true, false]) expect(demoSeedWanted({ embedded, asked, production: true })).toBe(false);
  });

  it('an empty database named by DATABASE_URL gets the first admin and no demo people, runs or campaign', async () => {
    const t = await createTestDatabase({ poolSize: 2 });
    const lines: string[] = [];
    const seeded = await seedIfEmpty({ appUrl: t.appUrl, log: (l) => lines.push(l), demo: false });
    expect(seeded.admin?.email).toBe(FIRST_ADMIN_EMAIL);
    expect(seeded.demoPassword).toBeNull();
    expect(seeded.demoUsers).toEqual([]);
    const users = await t.owner<{ email: string }>('SELECT email FROM app_user');
    expect(users.rows).toEqual([{ email: FIRST_ADMIN_EMAIL }]);
    expect((await t.owner('SELECT count(*)::int AS n FROM run')).rows).toEqual([{ n: 0 }]);
    expect(lines).toEqual([]);
  });
});
