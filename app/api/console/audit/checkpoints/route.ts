// The signed audit checkpoints as the file `npm run audit:verify -- --checkpoints` reads, for the
// people who may export the trail; downloaded alongside a JSON Lines export. Audited like an export.
// A person scoped to some workflows gets the checkpoints of their chains only (Z1,
// lib/read-models/audit-checkpoints.ts).
import { appendAudit } from '@/lib/audit/append.ts';
import type { CheckpointsFile } from '@/lib/sdk/audit/checkpoint-signature.ts';
import { consoleRoute } from '@/lib/api/console-route.ts';
import { checkpointsFor } from '@/lib/read-models/audit-checkpoints.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute('audit.export', { mutating: false }, async (g) => {
  await appendAudit(g.db, {
    chain: 'audit:export',
    actor: g.actor,
    action: 'audit.export',
    subjectType: 'audit',
    subjectId: 'export',
    detail: { format: 'checkpoints' },
    request: g.request,
  });
  const file: CheckpointsFile = {
    format: 'effect-ledger-checkpoints',
    version: 1,
    checkpoints: await checkpointsFor(g.db, g.scope),
  };
  return new Response(JSON.stringify(file, null, 1) + '\n', {
    headers: {
      'Content-Type': 'application/json',
      'Content-Disposition': 'attachment; filename="audit-checkpoints.json"',
      'Cache-Control': 'no-store',
    },
  });
});
