// Issue 17: X-Forwarded-For is believed only through proxies named in TRUSTED_PROXIES.
import { describe, expect, it } from 'vitest';
import { clientAddress, parseTrustedProxies } from '@/lib/ops/client-address.ts';
import { DOOR_MAX_FAILURES, DOOR_WINDOW_MS, doorRetryAfter, noteDoorFailure } from '@/lib/ops/door-limiter.ts';

describe('client address', () => {
  const none = parseTrustedProxies('');
  const lb = parseTrustedProxies('10.0.0.0/8, 192.0.2.7, fd00::/8');

  it('A1: ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    expect(clientAddress('198.51.100.4', '203.0.113.9', none)).toBe('198.51.100.4');
    expect(clientAddress('198.51.100.4', '203.0.113.9', lb)).toBe('198.51.100.4');
  });

  it('takes the address a trusted proxy forwarded for, walking right to left through trusted hops only', () => {
    expect(clientAddress('10.1.2.3', '203.0.113.9', lb)).toBe('203.0.113.9');
    // A client-chosen first entry stays out: the load balancer appended the real peer after it.
    expect(clientAddress('10.1.2.3', '1.2.3.4, 203.0.113.9', lb)).toBe('203.0.113.9');
    expect(clientAddress('10.1.2.3', '203.0.113.9, 192.0.2.7', lb)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:10.1.2.3', '203.0.113.9', lb)).toBe('203.0.113.9');
    expect(clientAddress('fd00::1', '2001:db8::5', lb)).toBe('2001:db8::5');
  });

  it('stops at garbage in the header, and when only trusted hops are left keeps the last one', () => {
    expect(clientAddress('10.1.2.3', 'not-an-ip', lb)).toBe('10.1.2.3');
    expect(clientAddress('10.1.2.3', '10.9.9.9', lb)).toBe('10.9.9.9');
    expect(clientAddress('10.1.2.3', '', lb)).toBe('10.1.2.3');
  });

  it('refuses a malformed TRUSTED_PROXIES entry, naming it', () => {
    expect(() => parseTrustedProxies('10.0.0.0/8, lb.internal')).toThrow(/"lb.internal" is not an IP address/);
    expect(() => parseTrustedProxies('10.0.0.0/40')).toThrow(/bad prefix length/);
  });
});

describe('runtime-key failures per source', () => {
  it(`after ${DOOR_MAX_FAILURES} failures in the window a source waits; others do not; it opens again`, () => {
    const t0 = 1_000_000_000;
    for (let i = 0; i < DOOR_MAX_FAILURES - 1; i++) noteDoorFailure('198.51.100.50', t0 + i);
    expect(doorRetryAfter('198.51.100.50', t0 + 100)).toBe(0);
    noteDoorFailure('198.51.100.50', t0 + 100);
    const wait = doorRetryAfter('198.51.100.50', t0 + 200);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(DOOR_WINDOW_MS / 1000);
    expect(doorRetryAfter('198.51.100.51', t0 + 200)).toBe(0);
    expect(doorRetryAfter('198.51.100.50', t0 + DOOR_WINDOW_MS + 101)).toBe(0);
    // No source known (an in-process caller): never limited.
    for (let i = 0; i < DOOR_MAX_FAILURES * 2; i++) noteDoorFailure(null, t0);
    expect(doorRetryAfter(null, t0)).toBe(0);
  });
});
