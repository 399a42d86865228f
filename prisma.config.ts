// Prisma CLI configuration. Migrations normally run through lib/db/schema-engine.ts (offline,
// WebAssembly engine); `prisma migrate deploy` applies the same folder where the native engine exists.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.MIGRATION_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgresql://localhost/effect_ledger',
  },
});
