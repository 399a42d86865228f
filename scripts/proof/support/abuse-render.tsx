// "Stored strings are rendered escaped in the console": hostile strings that ARE valid input (a run's
// workflow and event id, a record id, a user's name, a runtime key's name, a reason, evidence, a raw
// provider response) are stored through the product's own API and commands, then the console's real
// page components (app/(console)/**/page.tsx) are rendered to HTML with react-dom/server, inside a
// Next request scope that carries a signed-in auditor's session cookie (what `headers()` reads).
// Every payload that contains markup must appear only escaped: its raw text may not occur in the HTML.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { ReactElement, ReactNode } from 'react';
import { renderToString } from 'react-dom/server';
import { ConsoleQueryProvider } from '@/components/views/query-provider.tsx';
import {
  createRun,
  claimEffect,
  failEffect,
  markUnknown,
  recordResponse,
  revokeEffect,
  submitPlan,
} from '@/lib/ledger/index.ts';
import { createRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { insertUser } from '@/lib/auth/users.ts';
import type { ProofRow } from '../section.ts';
import { viewPage } from './abuse-view-page.tsx';
import { HOST, SYSTEM, type AbuseEnv } from './abuse-env.ts';
import { operatorActor, type Fixtures } from './abuse-fixtures.ts';

type SP = Record<string, string | string[] | undefined>;
type PageModule = {
  default: (props: {
    params: Promise<Record<string, string>>;
    searchParams: Promise<SP>;
  }) => Promise<ReactElement> | ReactElement;
};

const noop = () => undefined;
const ROUTER = {
  back: noop,
  forward: noop,
  refresh: noop,
  push: noop,
  replace: noop,
  prefetch: noop,
  hmrRefresh: noop,
};

/** Renders one console page as the given cookie would see it (no Next server, same components). */
export async function renderPage(
  mod: PageModule,
  route: string,
  cookie: string,
  params: Record<string, string> = {},
  searchParams: SP = {},
): Promise<string> {
  const { workAsyncStorage, workUnitAsyncStorage, AppRouterContext, SearchParamsContext, PathnameContext } =
    await nextInternals();
  const query = new URLSearchParams(
    Object.entries(searchParams).flatMap(([k, v]) =>
      v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => [k, x] as [string, string]),
    ),
  );
  const pathname = route.replace(/\[(\w+)\]/g, (_m, name: string) => params[name] ?? name);
  const headers = new Headers({ host: HOST, cookie });
  const workStore = {
    route,
    page: route,
    isStaticGeneration: false,
    forceStatic: false,
    dynamicShouldError: false,
    forceDynamic: true,
    fetchCache: undefined,
    isOnDemandRevalidate: false,
    isDraftMode: false,
    incrementalCache: undefined,
  } as never;
  const unitStore = {
    type: 'request',
    phase: 'render',
    headers,
    cookies: undefined,
    url: { pathname: route, search: '' },
  } as never;
  return workAsyncStorage.run(workStore, () =>
    workUnitAsyncStorage.run(unitStore, async () => {
      const element = await mod.default({
        params: Promise.resolve(params),
        searchParams: Promise.resolve(searchParams),
      });
      // The client components' router hooks read these contexts (the app router provides them in a real
      // render), and their view reads the query client the console layout provides.
      const tree: ReactNode = (
        <AppRouterContext.Provider value={ROUTER as never}>
          <PathnameContext.Provider value={pathname}>
            <SearchParamsContext.Provider value={query as never}>
              <ConsoleQueryProvider>{element}</ConsoleQueryProvider>
            </SearchParamsContext.Provider>
          </PathnameContext.Provider>
        </AppRouterContext.Provider>
      );
      return renderToString(tree);
    }),
  );
}

/** Next's request-scope storages; a Next server installs AsyncLocalStorage globally before loading them. */
async function nextInternals() {
  const g = globalThis as unknown as { AsyncLocalStorage?: typeof AsyncLocalStorage };
  g.AsyncLocalStorage ??= AsyncLocalStorage;
  const [work, unit, router, hooks] = await Promise.all([
    import('next/dist/server/app-render/work-async-storage.external.js'),
    import('next/dist/server/app-render/work-unit-async-storage.external.js'),
    import('next/dist/shared/lib/app-router-context.shared-runtime.js'),
    import('next/dist/shared/lib/hooks-client-context.shared-runtime.js'),
  ]);
  return {
    workAsyncStorage: work.workAsyncStorage,
    workUnitAsyncStorage: unit.workUnitAsyncStorage,
    AppRouterContext: router.AppRouterContext,
    SearchParamsContext: hooks.SearchParamsContext,
    PathnameContext: hooks.PathnameContext,
  };
}

const hasMarkup = (p: string) => /[<>"]/.test(p);

export async function renderEscapingCheck(
  env: AbuseEnv,
  fx: Fixtures,
  o: { payloads: string[]; full: boolean },
): Promise<{ row: ProofRow; notes: string[] }> {
  const payloads = o.payloads.map((p, i) => (hasMarkup(p) ? p.replace('alert(1)', `alert(${100 + i})`) : p));
  const markup = payloads.filter(hasMarkup);
  const db = env.db;
  const operator = operatorActor(env.users.operator);
  const runtime = { kind: 'runtime' as const, id: 'proof-rt', label: 'proof runtime', workflows: ['*'] };
  // Store every payload in every free-text place the product accepts it.
  const tool = await fx.tool({ generatedInputs: ['subject', payloads[0]!.slice(0, 60)] });
  const run = await createRun(
    { db, actor: runtime },
    { workflow: payloads[0]!.slice(0, 120), triggerId: payloads.join(' ').slice(0, 250) },
  );
  const keys: string[] = [];
  const stored: string[] = [];
  for (const [i, p] of payloads.entries()) {
    // A payload the product refuses as a record id (a lone surrogate) is not stored: nothing to render.
    const c = await claimEffect(
      { db, actor: runtime },
      {
        runId: run.runId,
        tool: tool.name,
        action: 'receipt',
        recordId: p.slice(0, 256),
        target: `t${i}-${randomUUID().slice(0, 6)}@example.com`,
      },
    ).catch(() => null);
    if (!c?.claimed) continue;
    keys.push(c.key);
    stored.push(p);
    await recordResponse({ db, actor: runtime }, {
      attemptId: c.attemptId,
      status: 500,
      headers: [['x-echo', p.slice(0, 1000)]],
      body: Buffer.from(`{"error":${JSON.stringify(p)}}`),
    } as never).catch(() => undefined);
    if (i % 3 === 0) await revokeEffect({ db, actor: operator }, { key: c.key, reason: p });
    else if (i % 3 === 1) await markUnknown({ db, actor: runtime }, { key: c.key, evidence: { error: p } });
    else await failEffect({ db, actor: runtime }, { key: c.key, evidence: { status: 550, body: p } });
  }
  await submitPlan(
    { db, actor: SYSTEM },
    {
      runId: run.runId,
      items: stored.map((p, i) => ({
        tool: tool.name,
        action: 'receipt',
        recordId: p.slice(0, 256),
        target: `plan${i}@example.com`,
      })),
    },
  );
  for (const p of markup.slice(0, 4)) {
    await insertUser(
      db,
      {
        email: `u-${randomUUID().slice(0, 8)}@example.com`,
        name: p.slice(0, 200),
        role: 'auditor',
        password: 'a-long-enough-password',
      },
      SYSTEM,
    );
    await createRuntimeKey({ db, actor: SYSTEM }, { name: p.slice(0, 100), workflows: [p.slice(0, 100)] }).catch(
      () => undefined,
    );
  }
  const cookie = await env.cookieFor(env.users.admin);
  const pages: [string, () => Promise<PageModule>, Record<string, string>, SP][] = [
    [
      '/runs',
      () =>
        viewPage(
          import('@/app/api/console/views/runs/route.ts'),
          import('@/app/(console)/runs/runs-view.tsx').then((m) => m.RunsBody),
        ),
      {},
      {},
    ],
    [
      '/runs/[runId]',
      () =>
        viewPage(
          import('@/app/api/console/views/run/[runId]/route.ts'),
          import('@/app/(console)/runs/[runId]/run-view.tsx').then((m) => m.RunBody),
        ),
      { runId: run.runId },
      {},
    ],
    [
      '/runs/[runId]/plan',
      () =>
        viewPage(
          import('@/app/api/console/views/plan/[runId]/route.ts'),
          import('@/app/(console)/runs/[runId]/plan/plan-view.tsx').then((m) => m.PlanBody),
        ),
      { runId: run.runId },
      {},
    ],
    ['/plans', () => import('@/app/(console)/plans/page.tsx') as unknown as Promise<PageModule>, {}, {}],
    [
      '/support',
      () =>
        viewPage(
          import('@/app/api/console/views/support/route.ts'),
          import('@/app/(console)/support/support-view.tsx').then((m) => m.SupportBody),
        ),
      {},
      {},
    ],
    [
      '/audit',
      () =>
        viewPage(
          import('@/app/api/console/views/audit/route.ts'),
          import('@/app/(console)/audit/audit-view.tsx').then((m) => m.AuditBody),
        ),
      {},
      {},
    ],
    ['/admin/users', () => import('@/app/(console)/admin/users/page.tsx') as unknown as Promise<PageModule>, {}, {}],
    ['/admin/keys', () => import('@/app/(console)/admin/keys/page.tsx') as unknown as Promise<PageModule>, {}, {}],
    ['/admin/tools', () => import('@/app/(console)/admin/tools/page.tsx') as unknown as Promise<PageModule>, {}, {}],
    ...keys
      .slice(0, o.full ? keys.length : 4)
      .map(
        (k) =>
          [
            '/target',
            () => import('@/app/(console)/target/page.tsx') as unknown as Promise<PageModule>,
            {},
            { key: k },
          ] as [string, () => Promise<PageModule>, Record<string, string>, SP],
      ),
  ];
  let trials = 0;
  const raw: string[] = [];
  const failures: string[] = [];
  const shown = new Set<string>();
  let bytes = 0;
  for (const [route, load, params, sp] of pages) {
    let html: string;
    try {
      html = await renderPage(await load(), route, cookie, params, sp);
    } catch (error) {
      failures.push(`${route}: ${(error as Error).message.slice(0, 160)}`);
      continue;
    }
    bytes += html.length;
    for (const p of markup) {
      trials++;
      if (html.includes(p)) raw.push(`${route}: ${p}`);
      const escaped = p.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      if (html.includes(escaped) || html.includes(escaped.replace(/"/g, '&quot;'))) shown.add(p);
    }
    // React escapes < > " ' & inside attribute values, so a tag ends at the first '>' and its attribute
    // names can be read off: an event-handler attribute (on...) would be injected markup.
    for (const tag of html.match(/<[a-zA-Z][^>]*>/g) ?? []) {
      for (const m of tag.matchAll(/\s([^\s="'>/]+)(?:="[^"]*")?/g))
        if (/^on/i.test(m[1]!)) raw.push(`${route}: attribute ${m[1]} in ${tag.slice(0, 80)}`);
    }
    if (/href="javascript:/i.test(html)) raw.push(`${route}: a javascript: link`);
  }
  return {
    row: {
      tried: `hostile strings stored through the API and commands, console pages rendered (${pages.length} pages x ${markup.length} markup payloads)`,
      trials,
      lost: 0,
      duplicated: 0,
      unauthorized: raw.length + failures.length,
      observed:
        `${raw.length} raw payloads in the HTML; ${shown.size} of ${markup.length} payloads seen escaped; ${(bytes / 1024).toFixed(0)} KiB rendered` +
        (failures.length ? `; pages that failed to render: ${failures.join(' | ')}` : '') +
        (raw.length ? `; raw: ${raw.slice(0, 5).join(' | ')}` : ''),
    },
    notes: [
      "Rendering: the console page components are rendered with react-dom/server renderToString inside a Next request scope (work and work-unit async storage) holding the admin's session cookie; no Next server runs, the components, read models and guards are the product's own.",
    ],
  };
}

const PAGE_VALUES = [
  '\u0000',
  'a\uD800b',
  'x'.repeat(5000),
  `' OR '1'='1`,
  '<script>alert(7)</script>',
  '2026-13-45T99:99',
  '-1',
  '\u202Eevil',
  '%',
  '😀',
];

/**
 * Console pages are GET endpoints too: each search parameter (and the run id in the path) gets a
 * malformed value. A page may show an empty state, a message or Next's not-found page; a thrown
 * error (what a browser would see as a 500) counts. Audit page renders write their own audit.read
 * entry, so this runs outside the row fingerprint of the bad-input cases.
 */
export async function renderMalformedPages(env: AbuseEnv, runId: string, o: { full: boolean }): Promise<ProofRow> {
  const values = o.full ? PAGE_VALUES : PAGE_VALUES.slice(0, 4);
  const cookie = await env.cookieFor(env.users.admin);
  const pages: [string, () => Promise<PageModule>, Record<string, string>, string[]][] = [
    [
      '/runs',
      () =>
        viewPage(
          import('@/app/api/console/views/runs/route.ts'),
          import('@/app/(console)/runs/runs-view.tsx').then((m) => m.RunsBody),
        ),
      {},
      ['workflow', 'status', 'from', 'to', 'q', 'cursor'],
    ],
    [
      '/runs/[runId]',
      () =>
        viewPage(
          import('@/app/api/console/views/run/[runId]/route.ts'),
          import('@/app/(console)/runs/[runId]/run-view.tsx').then((m) => m.RunBody),
        ),
      { runId },
      ['view', 'state', 'q', 'sort', 'cursor'],
    ],
    [
      '/audit',
      () =>
        viewPage(
          import('@/app/api/console/views/audit/route.ts'),
          import('@/app/(console)/audit/audit-view.tsx').then((m) => m.AuditBody),
        ),
      {},
      ['actor', 'action', 'run', 'target', 'from', 'to', 'outcome', 'cursor'],
    ],
    ['/target', () => import('@/app/(console)/target/page.tsx') as unknown as Promise<PageModule>, {}, ['key']],
    [
      '/support',
      () =>
        viewPage(
          import('@/app/api/console/views/support/route.ts'),
          import('@/app/(console)/support/support-view.tsx').then((m) => m.SupportBody),
        ),
      {},
      ['cursor'],
    ],
  ];
  const cases: {
    route: string;
    load: () => Promise<PageModule>;
    params: Record<string, string>;
    sp: SP;
    label: string;
  }[] = [];
  for (const [route, load, params, names] of pages) {
    for (const name of names)
      for (const v of values)
        cases.push({
          route,
          load,
          params,
          sp: { [name]: v },
          label: `${route}?${name}=${JSON.stringify(v).slice(0, 16)}`,
        });
  }
  for (const v of values)
    cases.push({
      route: '/runs/[runId]',
      load: pages[1]![1],
      params: { runId: v },
      sp: {},
      label: `/runs/${JSON.stringify(v).slice(0, 16)}`,
    });
  let errors = 0,
    notFound = 0;
  const examples: string[] = [];
  for (const c of cases) {
    try {
      await renderPage(await c.load(), c.route, cookie, c.params, c.sp);
    } catch (error) {
      const digest = String((error as { digest?: unknown }).digest ?? '');
      if (digest.startsWith('NEXT_HTTP_ERROR_FALLBACK;404') || digest.startsWith('NEXT_REDIRECT')) {
        notFound++;
        continue;
      }
      errors++;
      examples.push(`${c.label}: ${(error as Error).message.split('\n')[0]!.slice(0, 140)}`);
    }
  }
  return {
    tried: `console pages with malformed search parameters and path ids (${pages.map((p) => p[0]).join(', ')}), rendered as an admin`,
    trials: cases.length,
    lost: 0,
    duplicated: 0,
    unauthorized: errors,
    observed: `${cases.length - errors - notFound} rendered (empty state or message), ${notFound} not-found pages, ${errors} server errors${examples.length ? `: ${examples.slice(0, Number(process.env.ABUSE_EXAMPLES ?? 4)).join(' | ')}` : ''}`,
  };
}
