// Logs a shipper can read: an error's line keeps what explains it and drops the live objects a
// library hung on it (pg's pool attaches its whole client to an idle client's error).
import { describe, expect, it } from 'vitest';
import { serializeError } from '@/lib/ops/log.ts';

describe('the log lines of an error', () => {
  it('keep type, message, stack, code and cause, and drop an attached client, connection or socket', () => {
    const cause = new Error('socket hang up');
    const error = Object.assign(new Error('terminating connection due to administrator command', { cause }), {
      code: '57P01',
      client: { connectionParameters: { user: 'ledger_app', database: 'ledger' }, _queryQueue: [] },
      connection: { stream: {} },
      socket: {},
    });
    const line = serializeError(error) as Record<string, unknown>;
    expect(line).toMatchObject({ type: 'Error', code: '57P01' });
    expect(String(line.message)).toContain(error.message);
    expect(String(line.stack)).toContain('terminating connection');
    expect(JSON.stringify(line)).toContain('socket hang up');
    expect(Object.keys(line)).not.toContain('client');
    expect(Object.keys(line)).not.toContain('connection');
    expect(Object.keys(line)).not.toContain('socket');
    expect(JSON.stringify(line)).not.toContain('ledger_app');
  });
});
