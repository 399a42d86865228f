// Console views (docs/ARCHITECTURE.md, "What a page view asks of the server"): which addresses are
// shells over a view, the view each one reads, and where a refused read sends the person.
import { describe, expect, it } from 'vitest';
import { leaveFor } from '@/components/views/leave-for.ts';
import { isViewPath, runIdOf, viewAddressOf } from '@/components/views/view-paths.ts';

describe('view addresses', () => {
  it('maps every operator page to its view, with the query kept', () => {
    expect(viewAddressOf('/runs')).toBe('/api/console/views/runs');
    expect(viewAddressOf('/runs?status=crashed&q=a%20b')).toBe('/api/console/views/runs?status=crashed&q=a%20b');
    expect(viewAddressOf('/runs/7f0c?state=done')).toBe('/api/console/views/run/7f0c?state=done');
    expect(viewAddressOf('/runs/7f0c/plan')).toBe('/api/console/views/plan/7f0c');
    expect(viewAddressOf('/runs/7f0c/replay?filter=pending')).toBe('/api/console/views/replay/7f0c?filter=pending');
    expect(viewAddressOf('/support')).toBe('/api/console/views/support');
    expect(viewAddressOf('/audit?action=revoke')).toBe('/api/console/views/audit?action=revoke');
  });

  it('leaves pages rendered on the server alone', () => {
    for (const path of ['/inbox', '/approvals', '/admin/users', '/target?key=k', '/runs/7f0c/other', '/plans'])
      expect([path, viewAddressOf(path), isViewPath(path.split('?')[0]!)]).toEqual([path, null, false]);
  });

  it('reads the run id off the address, percent-decoded, and survives a bad escape', () => {
    expect(runIdOf('/runs/a%20b/plan')).toBe('a b');
    expect(runIdOf('/runs/%E0%A4%A')).toBe('%E0%A4%A');
  });

  it('sends the run id to the view as one path segment, however the address spelled it', () => {
    expect(viewAddressOf('/runs/a%20b/plan')).toBe('/api/console/views/plan/a%20b');
    expect(viewAddressOf('/runs/a b/plan')).toBe('/api/console/views/plan/a%20b');
    expect(viewAddressOf('/runs/%3F%2F')).toBe('/api/console/views/run/%3F%2F');
    expect(viewAddressOf('/runs/%E0%A4%A')).toBe('/api/console/views/run/%25E0%25A4%25A');
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
