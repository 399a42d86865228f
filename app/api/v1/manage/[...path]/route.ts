// The management API (docs/MANAGE.md): every operation is in lib/manage/endpoints.ts, served by
// lib/manage/http.ts with a personal access token. One catch-all route, so that `next dev` and the
// production front (scripts/support/api-router.ts) dispatch the same table.
import { serveManage } from '@/lib/manage/http.ts';

export const dynamic = 'force-dynamic';

export const GET = serveManage;
export const POST = serveManage;
