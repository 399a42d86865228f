import type { Metadata } from 'next';
import { requireViewer } from '@/lib/auth/page.ts';
import { canOn } from '@/lib/auth/grants.ts';
import { toolsPage } from '@/lib/read-models/admin.ts';
import { SaveTool } from '@/app/(console)/_components/admin-actions.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';

export const metadata: Metadata = { title: 'Tool definitions' };

export default async function ToolsPage() {
  const { user, db } = await requireViewer();
  const tools = await toolsPage(db);
  const canEdit = canOn(user.grants, 'tools.manage', null);
  return (
    <>
      <PageHeader
        title="Tool definitions"
        description="Registered tools: their action tags, the one target type they key on, and the inputs the model writes (never part of a key, K1/K4)."
        actions={canEdit ? <SaveTool /> : null}
      />
      <Card>
        {tools.length === 0 ? (
          <EmptyState title="No tools registered">
            {canEdit ? 'Register the tools your agents call.' : 'An admin registers tools.'}
          </EmptyState>
        ) : (
          <div className="relative overflow-x-auto">
            <table className="w-full text-sm">
              <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
                <tr className="border-b border-zinc-200">
                  <th className="py-2 pr-3 font-medium">Tool</th>
                  <th className="py-2 pr-3 font-medium">Actions</th>
                  <th className="py-2 pr-3 font-medium">Target</th>
                  <th className="py-2 pr-3 font-medium">Provider</th>
                  <th className="py-2 pr-3 font-medium">Model-generated inputs</th>
                  <th className="py-2 pr-3 font-medium">Controls</th>
                  <th />
                </tr>
              </thead>
              <tbody className="divide-y divide-zinc-100">
                {tools.map((t) => (
                  <tr key={t.id}>
                    <td className="mono py-2 pr-3 font-medium">{t.name}</td>
                    <td className="py-2 pr-3 text-xs">{t.actions.join(', ')}</td>
                    <td className="py-2 pr-3">{t.targetType}</td>
                    <td className="py-2 pr-3">{t.provider}</td>
                    <td className="py-2 pr-3 text-xs">{t.generatedInputs.join(', ') || '—'}</td>
                    <td className="space-x-1 py-2 pr-3">
                      {t.fourEyesBump && <Badge tone="amber">four-eyes bump</Badge>}
                      {t.distinctApprover && <Badge tone="amber">approver ≠ author</Badge>}
                      {t.supportsIdempotencyKey && <Badge>idempotency key</Badge>}
                    </td>
                    <td className="py-2">{canEdit && <SaveTool tool={t} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
