import type { Metadata } from 'next';
import { requireViewer } from '@/lib/auth/page.ts';
import { runtimeKeysPage } from '@/lib/read-models/admin.ts';
import { CreateKey, RevokeKey } from '@/app/(console)/_components/admin-actions.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';

export const metadata: Metadata = { title: 'Runtime keys' };

export default async function KeysPage() {
  const { db } = await requireViewer('runtime_keys.manage');
  const keys = await runtimeKeysPage(db);
  return (
    <>
      <PageHeader
        title="Runtime API keys"
        description="Per-runtime keys, hashed at rest and scoped to workflows (Z6). The secret is shown once, at creation."
        actions={<CreateKey />}
      />
      <Card>
        {keys.length === 0 ? (
          <EmptyState title="No runtime keys">Create one for each agent runtime that calls the API.</EmptyState>
        ) : (
          <table className="w-full text-sm">
            <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
              <tr className="border-b border-zinc-200">
                <th className="py-2 pr-3 font-medium">Name</th>
                <th className="py-2 pr-3 font-medium">Prefix</th>
                <th className="py-2 pr-3 font-medium">Workflows</th>
                <th className="py-2 pr-3 font-medium">Created</th>
                <th className="py-2 pr-3 font-medium">Last used</th>
                <th className="py-2 pr-3 font-medium">Status</th>
                <th />
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100">
              {keys.map((k) => (
                <tr key={k.id}>
                  <td className="py-2 pr-3 font-medium">{k.name}</td>
                  <td className="mono py-2 pr-3 text-xs">{k.prefix}</td>
                  <td className="py-2 pr-3 text-xs">{k.workflows.join(', ')}</td>
                  <td className="py-2 pr-3 text-xs">
                    <Time value={k.createdAt} />
                  </td>
                  <td className="py-2 pr-3 text-xs">
                    <Time value={k.lastUsedAt} />
                  </td>
                  <td className="py-2 pr-3">
                    {k.revokedAt ? <Badge tone="red">revoked</Badge> : <Badge tone="green">active</Badge>}
                  </td>
                  <td className="py-2">{!k.revokedAt && <RevokeKey keyId={k.id} name={k.name} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}
