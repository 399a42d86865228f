import type { Metadata } from 'next';
import { requireViewer } from '@/lib/auth/page.ts';
import { knownWorkflows, usersPage } from '@/lib/read-models/admin.ts';
import { AddGrant, RemoveGrant } from './grant-actions.tsx';
import { CreateUser, EditUser } from '@/app/(console)/_components/admin-actions.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { Card, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';

export const metadata: Metadata = { title: 'Users & roles' };

export default async function UsersPage() {
  const { user: me, db } = await requireViewer('users.manage');
  const [users, workflows] = await Promise.all([usersPage(db), knownWorkflows(db)]);
  return (
    <>
      <PageHeader
        title="Users & roles"
        description="admin: users, roles, tools, runtime keys · operator: approve plans, revoke, bump epochs · support: resolve unknowns · auditor: read everything, export (Z1). Roles are granted per workflow or for all workflows; a person sees only the workflows they hold a role in. Changes apply on the user's next request."
        actions={<CreateUser />}
      />
      <Card>
        <div className="relative overflow-x-auto">
          <table className="w-full text-sm">
            <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
              <tr className="border-b border-zinc-200">
                <th className="py-2 pr-3 font-medium">User</th>
                <th className="py-2 pr-3 font-medium">Role</th>
                <th className="py-2 pr-3 font-medium">Grants</th>
                <th className="py-2 pr-3 font-medium">Status</th>
                <th className="py-2 pr-3 font-medium">Updated</th>
                <th className="py-2 font-medium">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100">
              {users.map((u) => (
                <tr key={u.id} data-testid="user-row">
                  <td className="py-2 pr-3">
                    <div className="font-medium">{u.email}</div>
                    <div className="text-xs text-zinc-500">{u.name}</div>
                  </td>
                  <td className="py-2 pr-3">
                    <Badge tone="blue">{u.role}</Badge>
                  </td>
                  <td className="py-2 pr-3" data-testid="user-grants">
                    <ul className="space-y-1">
                      {u.grants.map((g) => {
                        const label = `${g.role} on ${g.workflow ?? 'all workflows'}`;
                        return (
                          <li key={g.id} className="flex items-center gap-2" data-testid="grant">
                            <span>{label}</span>
                            <RemoveGrant grantId={g.id} label={`${u.email}: ${label}`} />
                          </li>
                        );
                      })}
                      {u.grants.length === 0 && <li className="text-xs text-zinc-500">no role: sees nothing</li>}
                    </ul>
                    <AddGrant userId={u.id} email={u.email} workflows={workflows} />
                  </td>
                  <td className="py-2 pr-3">
                    {u.disabled ? <Badge tone="red">disabled</Badge> : <Badge tone="green">active</Badge>}
                  </td>
                  <td className="py-2 pr-3 text-xs">
                    <Time value={u.updatedAt} />
                  </td>
                  <td className="py-2">
                    {u.id !== me.id && <EditUser userId={u.id} email={u.email} role={u.role} disabled={u.disabled} />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
    </>
  );
}
