// The one wrapper every /api/v1 route uses: request id, runtime-key auth (401, audited), JSON body
// parsing (422 naming the field; nothing is written for a malformed body, not even an idempotency
// record), Idempotency-Key on POST (Z5), errors mapped to HTTP in one place, responses parsed to
// their documented shape before they leave.
import type { Span } from '@opentelemetry/api';
import type { z } from 'zod';
import type { ApiDoorAction } from '../audit/actions.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import type { HeldRow } from '../ledger/commands/peek-claim.ts';
import { invalid } from '../core/errors.ts';
import { findNul, parseInput } from '../ledger/validate.ts';
import { authenticate, requestMeta } from './auth.ts';
import { readJson } from './request-body.ts';
import { apiDb } from './db.ts';
import { observeApiAnswer } from '../ops/metrics.ts';
import { doorRetryAfter, noteDoorFailure } from '../ops/door-limiter.ts';
import { componentLogger } from '../ops/log.ts';
import { traced } from '../ops/tracing.ts';
import { isProblem, jsonSafe, problem, problemFrom, problemHeaders, type Problem } from './problem.ts';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
import { parseIdempotencyKey, requestHash } from './idempotency.ts';
import { idempotentPost, type OneStatement, type ReadOnlyClaim } from './idempotent-post.ts';
import type { OneStatementReport, PresentedKey } from './outcome-statement.ts';
import type { OpResult } from './operations.ts';

type RuntimeActor = Extract<Actor, { kind: 'runtime' }>;

let apiLogger: ReturnType<typeof componentLogger> | undefined;
const apiLog = () => (apiLogger ??= componentLogger('api', true));

export interface HandlerContext<B, P> {
  db: Db;
  actor: RuntimeActor;
  meta: RequestMeta;
  /** The same as meta, under the name lib commands and operations read (A1: where, in every audit entry). */
  request: RequestMeta;
  body: B;
  params: P;
  /** The request's reserved Idempotency-Key record, which the operation may complete itself. */
  answerRecord?: string;
}

export interface RouteSpec<S extends z.ZodType | undefined> {
  /** Audit action name for refusals at the door. */
  action: ApiDoorAction;
  /** Request body schema (POST). */
  body?: S;
  /** Response schemas by status: the body is parsed (stripped) to this shape before it leaves. */
  responses?: Record<number, z.ZodType>;
  /** Path parameter schema (validated before anything runs: 422 naming the parameter). */
  params?: z.ZodType;
  /**
   * For a claim: the operation's answer when it is known to change nothing (a claim of a held key),
   * in two steps. The first runs before the caller is authenticated and names the claim key and the
   * run's workflow (it may throw, and then the operation simply runs); the statement that
   * authenticates the caller reads that key's held row and, with an Idempotency-Key, stores the
   * answer with its record (lib/api/held-claim.ts). The second gets the authenticated caller and the
   * row, and answers, or gives null when the operation must run.
   */
  /**
   * For an outcome report: the whole request in one statement with the caller's key check and its
   * Idempotency-Key record (lib/api/outcome-statement.ts). It may throw or write nothing; the
   * request then runs the usual way, which decides.
   */
  oneStatement?: (
    c: { db: Db; meta: RequestMeta; body: S extends z.ZodType ? z.output<S> : undefined },
    caller: PresentedKey,
    idempotency: { key: string; hash: string },
  ) => Promise<OneStatementReport>;
  readOnlyAnswer?: (c: Omit<HandlerContext<S extends z.ZodType ? z.output<S> : undefined, never>, 'actor'>) => Promise<{
    key: string;
    workflow: string;
    finish(c: HandlerContext<unknown, unknown>, held: HeldRow | undefined): Promise<OpResult | null>;
  }>;
}

/**
 * Next gives the path's segments as strings; a server in front that has read the body already gives
 * its bytes too. They stay strings here: `spec.params` parses them (a bad one is a 400 naming it).
 */
type RouteCtx = { params: Promise<Record<string, string | string[] | undefined>>; body?: Uint8Array };

/** Success bodies are JSON; every 4xx and 5xx body is a problem document (RFC 9457). */
function json(status: number, body: unknown, meta: RequestMeta, extra: Record<string, string> = {}): Response {
  const kind = status >= 400 && isProblem(body) ? problemHeaders(body) : JSON_HEADERS;
  const text = JSON.stringify(body);
  const response = new Response(text, {
    status,
    headers: { ...kind, 'x-request-id': meta.requestId ?? '', ...extra },
  });
  answerTexts.set(response, text);
  return response;
}

// Each answer's body as the text it was made from, for a server in front (scripts/support/api-router.ts)
// that writes it out: reading it back through the Response's body stream cost that server more per
// request than making it (measured, docs/BENCHMARKS.md). Next reads the stream, as it always did.
const answerTexts = new WeakMap<Response, string>();

/** The body text of an answer this wrapper made, when `response` is one. */
export const answerText = (response: Response): string | undefined => answerTexts.get(response);

const answer = (p: Problem): OpResult => ({ status: p.status, body: p });

function shape(spec: RouteSpec<z.ZodType | undefined>, result: OpResult): OpResult {
  const body = jsonSafe(result.body);
  const schema = spec.responses?.[result.status];
  if (!schema) return { status: result.status, body };
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    console.error('[api] response does not match its schema', result.status, parsed.error.issues.slice(0, 3));
    return answer(problem('internal', 'internal error: response did not match its documented shape'));
  }
  return { status: result.status, body: parsed.data };
}

export function apiRoute<S extends z.ZodType | undefined, P = Record<string, never>>(
  spec: RouteSpec<S>,
  fn: (c: HandlerContext<S extends z.ZodType ? z.output<S> : undefined, P>) => Promise<OpResult>,
) {
  const handle = async (
    request: Request,
    ctx: RouteCtx | undefined,
    meta: RequestMeta,
    span?: Span,
  ): Promise<Response> => {
    const started = performance.now();
    let actorId = 'anonymous';
    // Every answer leaves through here, so the metrics and the log see each one.
    const reply = (status: number, body: unknown, extra?: Record<string, string>, replayed = false) => {
      const seconds = (performance.now() - started) / 1000;
      observeApiAnswer(spec.action, status, body, seconds, replayed);
      span?.setAttributes({ 'http.response.status_code': status, 'ledger.actor': actorId });
      const line = { requestId: meta.requestId, actor: actorId, ip: meta.ip, operation: spec.action, status };
      apiLog().info({ ...line, ms: Math.round(seconds * 10_000) / 10 }, 'api answer');
      return json(status, body, meta, extra);
    };
    // A source that keeps failing authentication is turned away before any query (lib/ops/door-limiter.ts).
    const wait = doorRetryAfter(meta.ip);
    if (wait) {
      const p = problem('rate_limited', `too many failed authentications from this address; retry in ${wait} s`);
      return reply(429, p, { 'retry-after': String(wait) });
    }
    try {
      const db = apiDb();
      // The request is read and checked before any query; a bad one is still answered 401 first when
      // its credentials are bad too, so nothing about the API leaks to a caller without a key.
      let input: { params: P; raw: unknown; body: unknown; key: string | null };
      try {
        input = await readInput(spec, request, ctx);
      } catch (error) {
        await authenticate(db, request, meta, spec.action);
        throw error;
      }
      const context = (actor: RuntimeActor) => ({
        db,
        actor,
        meta,
        request: meta,
        body: input.body as never,
        params: input.params as never,
      });
      // The operation's answer shaped to its documented schema, or its refusal as a problem document.
      const answered = async (actor: RuntimeActor, op: () => Promise<OpResult> | OpResult): Promise<OpResult> => {
        actorId = `${actor.kind}:${actor.id}`;
        try {
          const result = await op();
          const shaped = shape(spec, result);
          return result.stored === undefined ? shaped : { ...shaped, stored: result.stored };
        } catch (error) {
          return answer(problemFrom(error));
        }
      };
      const run = (actor: RuntimeActor, answerRecord?: string): Promise<OpResult> =>
        answered(actor, () => fn({ ...context(actor), answerRecord }));
      if (request.method !== 'POST' || input.key === null) {
        const r = await run(await authenticate(db, request, meta, spec.action));
        return reply(r.status, r.body);
      }
      const hash = requestHash('POST', new URL(request.url).pathname, input.raw ?? null);
      const start = spec.readOnlyAnswer;
      const readOnly =
        start &&
        (async (): Promise<ReadOnlyClaim> => {
          const claim = await start({
            db,
            meta,
            request: meta,
            body: input.body as never,
            params: input.params as never,
          });
          return {
            key: claim.key,
            workflow: claim.workflow,
            finish: async (actor, held) => {
              actorId = `${actor.kind}:${actor.id}`;
              try {
                const found = await claim.finish(context(actor), held);
                return found && shape(spec, found);
              } catch (error) {
                return answer(problemFrom(error));
              }
            },
          };
        });
      const idempotency = { key: input.key, hash };
      const inOne = spec.oneStatement;
      const oneStatement: OneStatement | undefined = inOne && {
        run: (caller) => inOne({ db, meta, body: input.body as never }, caller, idempotency),
        answer: answered,
      };
      const r = await idempotentPost(db, request, meta, spec.action, idempotency, run, readOnly, oneStatement);
      return reply(r.status, r.body, r.replayed ? { 'idempotent-replayed': 'true' } : {}, r.replayed);
    } catch (error) {
      const p = problemFrom(error);
      if (p.status === 401) noteDoorFailure(meta.ip);
      return reply(p.status, p, p.status === 401 ? { 'www-authenticate': 'Bearer realm="effect-ledger"' } : {});
    }
  };
  // One span per request when tracing is on (lib/ops/tracing.ts); the ledger commands' spans nest in it.
  const route = (request: Request, ctx?: RouteCtx): Promise<Response> => {
    const meta = requestMeta(request);
    const attributes = {
      'ledger.request_id': meta.requestId ?? '',
      'http.request.method': request.method,
      'url.path': new URL(request.url).pathname,
    };
    return traced(`api ${spec.action}`, attributes, (span) => handle(request, ctx, meta, span), request.headers);
  };
  // Every answer writes its own log line (reply above), so a server in front need not write another.
  return Object.assign(route, { logsItsAnswers: true as const });
}

async function readInput<S extends z.ZodType | undefined, P>(spec: RouteSpec<S>, request: Request, ctx?: RouteCtx) {
  const rawParams = (await ctx?.params) ?? {};
  const params = (spec.params ? parseInput(spec.params, rawParams) : rawParams) as P;
  if (request.method !== 'POST') return { params, raw: undefined, body: undefined, key: null };
  const raw = await readJson(request, ctx?.body);
  const nul = findNul(raw, []);
  if (nul) throw invalid(nul, `${nul}: contains a NUL character`);
  const body = spec.body ? parseInput(spec.body, raw === undefined ? {} : raw) : undefined;
  return { params, raw, body, key: parseIdempotencyKey(request) };
}
