import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { requireViewer } from '@/lib/auth/page.ts';
import { runtimeKeysPage } from '@/lib/read-models/admin.ts';
import { CreateKey, RevokeKey } from '@/app/(console)/_components/admin-actions.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, inputClass } from '@/components/ui/card.tsx';
import { one, withParams, type SP } from '@/components/search-params.ts';
import { Time } from '@/components/time.tsx';

export const metadata: Metadata = { title: 'Runtime keys' };

export default async function KeysPage({ searchParams }: { searchParams: Promise<SP> }) {
  const [sp, { db }] = await Promise.all([searchParams, requireViewer('runtime_keys.manage')]);
  const q = one(sp, 'q') ?? '';
  const { rows: keys, total, page, pages } = await runtimeKeysPage(db, { q, page: Number(one(sp, 'page') ?? 1) });
  return (
    <>
      <PageHeader
        title="Runtime API keys"
        description="Per-runtime keys, hashed at rest and scoped to workflows (Z6). The secret is shown once, at creation."
        actions={<CreateKey />}
      />
      <Card>
        <form method="get" role="search" aria-label="Find runtime keys" className="mb-4 flex flex-wrap items-end gap-2">
          <label className="text-xs font-medium text-zinc-700">
            Name, prefix or workflow
            <input name="q" defaultValue={q} className={`${inputClass} mt-1 w-64 max-w-full`} />
          </label>
          <button type="submit" className={linkButton('primary', 'sm')}>
            Search
          </button>
          {q && (
            <Link href="/admin/keys" className={linkButton('ghost', 'sm')}>
              Clear
            </Link>
          )}
          <span className="ml-auto text-xs text-zinc-600" data-testid="keys-count">
            {total.toLocaleString('en-US')} key{total === 1 ? '' : 's'}
            {pages > 1 ? ` · page ${page} of ${pages}` : ''}
          </span>
        </form>
        {keys.length === 0 ? (
          <EmptyState title={q ? 'No runtime key matches' : 'No runtime keys'}>
            {q
              ? 'Search by any part of the name or prefix, or a whole workflow name.'
              : 'Create one for each agent runtime that calls the API.'}
          </EmptyState>
        ) : (
          <div className="relative overflow-x-auto">
            <table className="w-full text-sm">
              <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
                <tr className="border-b border-zinc-200">
                  <th className="py-2 pr-3 font-medium">Name</th>
                  <th className="py-2 pr-3 font-medium">Prefix</th>
                  <th className="py-2 pr-3 font-medium">Workflows</th>
                  <th className="py-2 pr-3 font-medium">Created</th>
                  <th className="py-2 pr-3 font-medium">Last used</th>
                  <th className="py-2 pr-3 font-medium">Status</th>
                  <th>
                    <span className="sr-only">Actions</span>
                  </th>
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
          </div>
        )}
        {pages > 1 && (
          <nav aria-label="Pages of runtime keys" className="mt-3 flex justify-between">
            {page > 1 ? (
              <Link
                href={withParams('/admin/keys', sp, { page: String(page - 1) })}
                className={linkButton('secondary', 'sm')}
              >
                Previous page
              </Link>
            ) : (
              <span />
            )}
            {page < pages && (
              <Link
                href={withParams('/admin/keys', sp, { page: String(page + 1) })}
                className={linkButton('secondary', 'sm')}
              >
                Next page
              </Link>
            )}
          </nav>
        )}
      </Card>
    </>
  );
}
