// Console views (docs/ARCHITECTURE.md, "What a page view asks of the server"): the address of the
// view a page reads, and where a refused read sends the person.
import { describe, expect, it } from 'vitest';
import { leaveFor } from '@/lib/auth/leave-for.ts';
import { viewUrl } from '@/components/views/fetch-view.ts';

const RUN = '7f0c1d2e-3a4b-4c5d-8e6f-708192a3b4c5';

describe('view addresses', () => {
  it('names each view by its page and run, with the query kept', () => {
    expect(viewUrl('runs', null, '')).toBe('/api/console/views/runs');
    expect(viewUrl('runs', null, 'status=crashed&q=a%20b')).toBe('/api/console/views/runs?status=crashed&q=a%20b');
    expect(viewUrl('run', RUN, 'state=done')).toBe(`/api/console/views/run/${RUN}?state=done`);
    expect(viewUrl('replay', RUN, 'filter=pending')).toBe(`/api/console/views/replay/${RUN}?filter=pending`);
  });

  it('keeps a run id one path segment however it is spelled', () => {
    expect(viewUrl('plan', 'a b/../x', '')).toBe('/api/console/views/plan/a%20b%2F..%2Fx');
  });
});

describe('a refused view read', () => {
  it('sends a signed-out person to sign in, with the reason and the way back', () => {
    expect(leaveFor({ status: 401, reason: 'signed_out' }, '/runs/1?state=done')).toBe(
      '/sign-in?reason=signed_out&callbackUrl=%2Fruns%2F1%3Fstate%3Ddone',
    );
    expect(leaveFor({ status: 401 }, '/audit')).toBe('/sign-in?callbackUrl=%2Faudit');
  });

  it('sends a password someone else chose to its change, and a role that cannot read to the forbidden page', () => {
    expect(leaveFor({ status: 403, reason: 'password_change' }, '/runs')).toBe('/account/password');
    expect(leaveFor({ status: 403 }, '/runs')).toBe('/forbidden');
  });

  it('keeps a missing subject or a server error on the page', () => {
    expect(leaveFor({ status: 404 }, '/runs/x')).toBeNull();
    expect(leaveFor({ status: 500 }, '/runs')).toBeNull();
  });
});
