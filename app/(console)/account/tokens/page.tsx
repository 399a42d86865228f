import type { Metadata } from 'next';
import { requireViewer } from '@/lib/auth/page.ts';
import { listAccessTokens } from '@/lib/auth/access-tokens.ts';
import { Badge } from '@/components/ui/badge.tsx';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { CreateToken, RevokeToken } from './token-actions.tsx';

export const metadata: Metadata = { title: 'Access tokens' };
export const dynamic = 'force-dynamic';

// The person's own tokens for the management API and the CLI (docs/MANAGE.md). Only a prefix is
// shown: the token itself is kept as a hash and was shown once, at creation.
export default async function AccessTokensPage() {
  const { user, db } = await requireViewer();
  const tokens = await listAccessTokens(db, user.id);
  return (
    <>
      <PageHeader
        title="Personal access tokens"
        description="For the management API and the effect-ledger CLI. A token acts as you, with your roles on your workflows; it stops at its expiry, when you revoke it, or when your account is disabled."
        actions={<CreateToken />}
      />
      <Card>
        {tokens.length === 0 ? (
          <EmptyState title="No tokens">
            Create one for each script or machine that manages the ledger as you.
          </EmptyState>
        ) : (
          <div className="relative overflow-x-auto">
            <table className="w-full text-sm" data-testid="access-tokens">
              <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
                <tr className="border-b border-zinc-200">
                  <th className="py-2 pr-3 font-medium">Name</th>
                  <th className="py-2 pr-3 font-medium">Prefix</th>
                  <th className="py-2 pr-3 font-medium">Created</th>
                  <th className="py-2 pr-3 font-medium">Expires</th>
                  <th className="py-2 pr-3 font-medium">Last used</th>
                  <th className="py-2 pr-3 font-medium">Status</th>
                  <th>
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody className="divide-y divide-zinc-100">
                {tokens.map((t) => {
                  const expired = t.expired;
                  return (
                    <tr key={t.id}>
                      <td className="py-2 pr-3 font-medium">{t.name}</td>
                      <td className="mono py-2 pr-3 text-xs">elp_{t.prefix}</td>
                      <td className="py-2 pr-3 text-xs">
                        <Time value={t.createdAt} />
                      </td>
                      <td className="py-2 pr-3 text-xs">
                        <Time value={t.expiresAt} />
                      </td>
                      <td className="py-2 pr-3 text-xs">
                        <Time value={t.lastUsedAt} />
                      </td>
                      <td className="py-2 pr-3">
                        {t.revokedAt ? (
                          <Badge tone="red">revoked</Badge>
                        ) : expired ? (
                          <Badge tone="zinc">expired</Badge>
                        ) : (
                          <Badge tone="green">active</Badge>
                        )}
                      </td>
                      <td className="py-2 text-right">
                        {!t.revokedAt && !expired && <RevokeToken tokenId={t.id} name={t.name} />}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
