// The in-process transport: the same operations the HTTP routes call (lib/api/operations.ts), with
// the same authorization, shapes and error codes, but no network. For the demo seeder, jobs and
// tests that already hold a database client and an actor.
import type { z } from 'zod';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../ledger/actor.ts';
import { jsonSafe, problemFrom } from '../api/problem.ts';
import * as ops from '../api/operations.ts';
import * as s from '../api/schemas.ts';
import { LedgerApiError, type Transport } from './types.ts';

export interface DirectTransportOptions {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

export function directTransport(options: DirectTransportOptions): Transport {
  const ctx = {
    db: options.db,
    actor: options.actor,
    request: options.request ?? { userAgent: 'effect-ledger-sdk/direct' },
  };
  async function call<T>(
    fn: () => Promise<ops.OpResult>,
    schemas: Record<number, z.ZodType>,
  ): Promise<{ status: number; body: T }> {
    let result: ops.OpResult;
    try {
      result = await fn();
    } catch (error) {
      const { status, code, detail, field, type: _type, title: _title, ...details } = problemFrom(error);
      throw new LedgerApiError(status, code, detail, field, details);
    }
    const schema = schemas[result.status];
    const body = jsonSafe(result.body);
    return { status: result.status, body: (schema ? schema.parse(body) : body) as T };
  }
  return {
    createRun: async (body) => (await call<never>(() => ops.opCreateRun(ctx, body), { 201: s.createRunResponse })).body,
    submitPlan: async (runId, items) =>
      (await call<never>(() => ops.opSubmitPlan(ctx, runId, { items }), { 201: s.submitPlanResponse })).body,
    readRun: async (runId) => (await call<never>(() => ops.opReadRun(ctx, runId), { 200: s.runViewResponse })).body,
    replay: async (runId) => {
      const r = await call<Record<string, unknown>>(() => ops.opReplay(ctx, runId, {}), {
        202: s.replayAccepted,
        409: s.replayBlocked,
      });
      return { status: r.status, ...r.body } as never;
    },
    claim: async (body) =>
      (await call<never>(() => ops.opClaim(ctx, body), { 201: s.claimWon, 200: s.claimLost })).body,
    recordResponse: async (attemptId, raw) => {
      await call(
        () =>
          ops.opAttemptResponse(ctx, attemptId, {
            status: raw.status,
            headers: raw.headers,
            bodyBase64: Buffer.from(raw.body).toString('base64'),
          }),
        {},
      );
    },
    reportOutcome: async (body) =>
      (await call<never>(() => ops.opOutcome(ctx, body), { 200: s.effectStateResponse })).body,
    reportDeletion: async (body) =>
      (await call<never>(() => ops.opDeletion(ctx, body), { 200: s.deletionResponse })).body,
  };
}
