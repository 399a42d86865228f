// Liveness: the process answers. Nothing else is checked, so a database outage does not get every
// web process restarted at once (readiness, /readyz, takes them out of the load balancer instead).
export const dynamic = 'force-dynamic';

export function GET(): Response {
  return Response.json({ status: 'ok' }, { headers: { 'cache-control': 'no-store' } });
}
