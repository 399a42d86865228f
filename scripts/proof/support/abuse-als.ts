// Next's request-scope storages (headers(), cookies()) bind to globalThis.AsyncLocalStorage when their
// module loads; a Next server sets it at start-up. Import this first wherever console pages are
// rendered in-process (scripts/proof/support/abuse-render.tsx), before anything loads next/dist.
import { AsyncLocalStorage } from 'node:async_hooks';

const g = globalThis as unknown as { AsyncLocalStorage?: typeof AsyncLocalStorage };
g.AsyncLocalStorage ??= AsyncLocalStorage;
