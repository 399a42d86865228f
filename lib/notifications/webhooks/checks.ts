// The two webhook events no single transaction records, found by the worker's notification pass:
//   unknowns.appeared: per route, once at least `unknownsThreshold` keys of its workflows became
//     unknown since the route's previous alert. The alert's subject is the newest such key's change
//     time, so every worker counting at once computes the same subject and the outbox keeps one row.
//   audit.verification_failed: the stored background verification (lib/audit/verification.ts) found a
//     broken entry; one alert per broken entry.
import type { Db } from '@/lib/db/client.ts';
import { readAuditVerification } from '@/lib/audit/verification.ts';
import { enqueueWebhooks } from './enqueue.ts';
import { routeTakes, type NotificationRoute } from './routes.ts';
import { notificationRoutes } from './stored-routes.ts';
import { plural } from '@/lib/plural.ts';

async function checkUnknowns(db: Db, route: NotificationRoute): Promise<number> {
  const last = await db.notificationWebhook.findFirst({
    where: { route: route.name, eventType: 'unknowns.appeared' },
    orderBy: { subjectId: 'desc' },
    select: { subjectId: true },
  });
  // Microseconds kept (the subject is text): a key changed in the same millisecond as the newest one
  // counted is not counted again.
  const since = last?.subjectId ?? '1970-01-01T00:00:00.000000Z';
  const workflows = route.workflows ?? null;
  const rows = await db.$queryRaw<{ n: bigint; newest: string | null; workflows: string[] | null }[]>`
    SELECT count(*) AS n, to_char(max(k.changed_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS newest,
           array_agg(DISTINCT r.workflow) AS workflows
      FROM effect_key k JOIN run r ON r.id = k.run_id
     WHERE k.state = 'unknown' AND k.changed_at > ${since}::timestamptz
       AND (${workflows}::text[] IS NULL OR r.workflow = ANY(${workflows}::text[]))`;
  const { n, newest, workflows: about } = rows[0]!;
  if (Number(n) < route.unknownsThreshold || !newest) return 0;
  // Only this route: another route's threshold and previous alert are its own.
  const only = { ...route, events: ['unknowns.appeared' as const] };
  if (!routeTakes(only, 'unknowns.appeared', about ?? [])) return 0;
  return db.$transaction(async (tx) => {
    const event = {
      type: 'unknowns.appeared' as const,
      subjectId: newest,
      workflows: about ?? [],
      title: `${plural(Number(n), 'effect')} became unknown`,
      text: `${plural(Number(n), 'key')} of ${(about ?? []).join(', ')} ${Number(n) === 1 ? 'waits' : 'wait'} for support to decide whether they were sent (S4).`,
      link: '/support',
      details: { count: Number(n), since },
    };
    return enqueueWebhooks(tx, event, { only: [route.name], routes: [route] });
  });
}

async function checkAuditVerification(db: Db, routes: readonly NotificationRoute[]): Promise<number> {
  const v = await readAuditVerification(db);
  if (v.state !== 'broken') return 0;
  return enqueueWebhooks(
    db,
    {
      type: 'audit.verification_failed',
      subjectId: `${v.chain}#${v.seq}`,
      workflows: [],
      title: 'The audit trail failed verification',
      text: `Chain ${v.chain} breaks at entry ${v.seq}: ${v.problem}`,
      link: '/audit',
      details: { chain: v.chain, seq: v.seq, entryId: v.entryId, problem: v.problem },
    },
    { routes },
  );
}

/** Runs both checks; returns how many webhooks they queued. */
export async function checkWebhookEvents(db: Db): Promise<number> {
  const routes = await notificationRoutes(db);
  if (routes.length === 0) return 0;
  let queued = 0;
  for (const route of routes.filter((r) => !r.events || r.events.includes('unknowns.appeared')))
    queued += await checkUnknowns(db, route);
  if (routes.some((r) => !r.events || r.events.includes('audit.verification_failed')))
    queued += await checkAuditVerification(db, routes);
  return queued;
}
