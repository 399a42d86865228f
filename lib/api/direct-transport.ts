// The SDK's in-process transport: the same operations the HTTP routes call (./operations.ts), with
// the same authorization, shapes and error codes, but no network. For the demo seeder, jobs and
// tests that already hold a database client and an actor. It lives on the server side because it
// holds a database client; the SDK package (lib/sdk) only defines the Transport it implements.
import type { z } from 'zod';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { LedgerApiError } from '../sdk/errors.ts';
import { encodeRawResponse, type Transport } from '../sdk/types.ts';
import { jsonSafe, problemFrom } from './problem.ts';
import * as ops from './operations.ts';
import * as s from './schemas.ts';

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
    recordResponse: async (attemptId, raw) =>
      (
        await call<never>(() => ops.opAttemptResponse(ctx, attemptId, encodeRawResponse(raw)), {
          201: s.attemptRecorded,
        })
      ).body,
    reportOutcome: async (body) =>
      (await call<never>(() => ops.opOutcome(ctx, body), { 200: s.effectStateResponse })).body,
    reportDeletion: async (body) =>
      (await call<never>(() => ops.opDeletion(ctx, body), { 200: s.deletionResponse })).body,
    readEffect: async (key) =>
      (await call<never>(() => ops.opReadEffect(ctx, key), { 200: s.effectViewResponse })).body,
  };
}
