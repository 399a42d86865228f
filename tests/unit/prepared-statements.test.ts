import { describe, expect, it } from 'vitest';
import { preparedStatementsFor } from '@/lib/db/client.ts';

describe('named prepared statements and connection poolers', () => {
  it('a URL marked pgbouncer=true turns names off and loses the mark; a plain URL keeps them', () => {
    expect(preparedStatementsFor('postgresql://app:pw@db:6432/ledger?pgbouncer=true&sslmode=disable')).toEqual({
      url: 'postgresql://app:pw@db:6432/ledger?sslmode=disable',
      prepared: false,
    });
    expect(preparedStatementsFor('postgresql://app:pw@db:5432/ledger')).toEqual({
      url: 'postgresql://app:pw@db:5432/ledger',
      prepared: true,
    });
    expect(preparedStatementsFor('postgresql://app:pw@db:6432/ledger?pgbouncer=false').prepared).toBe(true);
  });
});
