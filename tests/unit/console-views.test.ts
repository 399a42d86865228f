// Console views (docs/ARCHITECTURE.md, "What a page view asks of the server"): which addresses are
// shells over a view, the view each one reads, and where a refused read sends the person.
import { describe, expect, it } from 'vitest';
import { leaveFor } from '@/components/views/leave-for.ts';
import { isViewPath, runIdOf, viewAddressOf } from '@/components/views/view-paths.ts';

const RUN = '7f0c1d2e-3a4b-4c5d-8e6f-708192a3b4c5';

describe('view addresses', () => {
  it('maps every operator page to its view, with the query kept', () => {
    expect(viewAddressOf('/runs')).toBe('/api/console/views/runs');
    expect(viewAddressOf('/runs?status=crashed&q=a%20b')).toBe('/api/console/views/runs?status=crashed&q=a%20b');
    expect(viewAddressOf(`/runs/${RUN}?state=done`)).toBe(`/api/console/views/run/${RUN}?state=done`);
    expect(viewAddressOf(`/runs/${RUN}/plan`)).toBe(`/api/console/views/plan/${RUN}`);
    expect(viewAddressOf(`/runs/${RUN}/replay?filter=pending`)).toBe(`/api/console/views/replay/${RUN}?filter=pending`);
    expect(viewAddressOf('/support')).toBe('/api/console/views/support');
    expect(viewAddressOf('/audit?action=revoke')).toBe('/api/console/views/audit?action=revoke');
  });

  it('leaves pages rendered on the server alone', () => {
    for (const path of ['/inbox', '/approvals', '/admin/users', '/target?key=k', `/runs/${RUN}/other`, '/plans'])
      expect([path, viewAddressOf(path), isViewPath(path.split('?')[0]!)]).toEqual([path, null, false]);
  });

  it('reads the run id off the address, percent-decoded, and survives a bad escape', () => {
    expect(runIdOf('/runs/a%20b/plan')).toBe('a b');
    expect(runIdOf('/runs/%E0%A4%A')).toBe('%E0%A4%A');
  });

  it('gives a malformed run id no shell: the address is the 404 page (next.config.js), not a view', () => {
    for (const path of ['/runs/7f0c', '/runs/a%20b/plan', '/runs/a b/plan', '/runs/%3F%2F', '/runs/%E0%A4%A'])
      expect([path, viewAddressOf(path), isViewPath(path)]).toEqual([path, null, false]);
    expect(viewAddressOf(`/runs/${RUN.toUpperCase()}`)).toBe(`/api/console/views/run/${RUN.toUpperCase()}`);
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
