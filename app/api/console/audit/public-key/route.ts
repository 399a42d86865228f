// The public key of the audit checkpoint signing key (PEM), for anyone signed in to the console:
// auditors verify exports against signed checkpoints with it (`npm run audit:verify -- --public-key`).
// Derived from AUDIT_SIGNING_KEY on each request; its key id travels in X-Key-Id and the file name.
import { loadCheckpointKey, publicKeyPem } from '@/lib/audit/checkpoint.ts';
import { consoleRoute } from '@/lib/api/console-route.ts';
import { env } from '@/lib/env.ts';
import { LedgerError } from '@/lib/core/errors.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute('console.read', { mutating: false }, async () => {
  const setting = env().AUDIT_SIGNING_KEY;
  if (!setting) throw new LedgerError('not_found', 'no audit signing key is configured (AUDIT_SIGNING_KEY)');
  const key = loadCheckpointKey(setting);
  return new Response(publicKeyPem(key), {
    headers: {
      'Content-Type': 'application/x-pem-file',
      'Content-Disposition': `attachment; filename="effect-ledger-audit-${key.keyId}.pem"`,
      'X-Key-Id': key.keyId,
      'Cache-Control': 'no-store',
    },
  });
});
