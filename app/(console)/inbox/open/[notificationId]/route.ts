// Opening a notification from the inbox: marks it read and redirects (303) to what it is about. A GET
// on purpose (docs/NOTIFICATIONS.md, "Opening a notification"): a link keeps what people do with
// links (open in a new tab, keyboard, no script needed). It only ever marks the caller's own
// notification read; a cross-site request is refused by the guard (Sec-Fetch-Site, audited) unless it
// is a link the person clicked (an email's), a prefetch changes nothing, and the answer is never
// cached, so every opening reaches the server.
import { consoleRoute } from '@/lib/api/console-route.ts';
import { openNotification } from '@/lib/notifications/read-marks.ts';

export const dynamic = 'force-dynamic';

/** A browser or the router asking ahead of a click (Sec-Purpose, Purpose, Next's router): not an opening. */
function isPrefetch(headers: Headers): boolean {
  const purpose = `${headers.get('sec-purpose') ?? ''} ${headers.get('purpose') ?? ''}`;
  return purpose.includes('prefetch') || headers.has('next-router-prefetch');
}

export const GET = consoleRoute<{ params: Promise<{ notificationId: string }> }>(
  'console.read',
  // A link in an email read in webmail is a cross-site navigation the person started: accepted
  // (allowUserNavigation); someone not signed in is sent to sign in and brought back here.
  { mutating: true, allowUserNavigation: true, signInFirst: true },
  async (g, req, ctx) => {
    if (isPrefetch(req.headers)) return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
    const { notificationId } = await ctx.params;
    const { link } = await openNotification(g, { notificationId });
    // A relative Location: the browser resolves it against the address it used, behind any proxy.
    return new Response(null, { status: 303, headers: { location: link, 'cache-control': 'no-store' } });
  },
);
