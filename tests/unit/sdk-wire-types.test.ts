// The SDK's wire types are written by hand (the package carries no zod); these checks make each one
// equal to what the server's schema accepts (requests: z.input) or answers (responses: z.output).
// They are compile-time checks: `npm run typecheck` (tsc --noEmit) fails when the two drift apart.
import type { z } from 'zod';
import { describe, expectTypeOf, it } from 'vitest';
import type * as s from '@/lib/api/schemas.ts';
import type { ProblemCode as ServerProblemCode } from '@/lib/api/problem.ts';
import type { EffectState as ServerEffectState } from '@/lib/ledger/transitions.ts';
import type { TargetType as ServerTargetType } from '@/lib/db/generated/enums.ts';
import type * as sdk from '@/lib/sdk/index.ts';

describe('SDK wire types', () => {
  it('request types equal the input of the schema the server parses them with', () => {
    expectTypeOf<sdk.CreateRunRequest>().toEqualTypeOf<z.input<typeof s.createRunBody>>();
    expectTypeOf<sdk.SubmitPlanRequest>().toEqualTypeOf<z.input<typeof s.submitPlanBody>>();
    expectTypeOf<sdk.PlanItem>().toEqualTypeOf<z.input<typeof s.submitPlanBody>['items'][number]>();
    expectTypeOf<sdk.ClaimRequest>().toEqualTypeOf<z.input<typeof s.claimBody>>();
    expectTypeOf<sdk.EncodedRawResponse>().toEqualTypeOf<z.input<typeof s.attemptResponseBody>>();
    expectTypeOf<sdk.OutcomeRequest>().toEqualTypeOf<z.input<typeof s.outcomeBody>>();
    expectTypeOf<sdk.DeletionRequest>().toEqualTypeOf<z.input<typeof s.deletionBody>>();
  });

  it('response types equal the output of the schema the server shapes its answers with', () => {
    expectTypeOf<sdk.RunCreated>().toEqualTypeOf<z.output<typeof s.createRunResponse>>();
    expectTypeOf<sdk.PlanSubmitted>().toEqualTypeOf<z.output<typeof s.submitPlanResponse>>();
    expectTypeOf<sdk.RunView>().toEqualTypeOf<z.output<typeof s.runViewResponse>>();
    expectTypeOf<sdk.ReplayAccepted>().toEqualTypeOf<z.output<typeof s.replayAccepted>>();
    expectTypeOf<sdk.ReplayBlocked>().toEqualTypeOf<z.output<typeof s.replayBlocked>>();
    expectTypeOf<sdk.ClaimWon>().toEqualTypeOf<z.output<typeof s.claimWon>>();
    expectTypeOf<sdk.ClaimLost>().toEqualTypeOf<z.output<typeof s.claimLost>>();
    expectTypeOf<sdk.AttemptRecorded>().toEqualTypeOf<z.output<typeof s.attemptRecorded>>();
    expectTypeOf<sdk.EffectStateResponse>().toEqualTypeOf<z.output<typeof s.effectStateResponse>>();
    expectTypeOf<sdk.DeletionResponse>().toEqualTypeOf<z.output<typeof s.deletionResponse>>();
    expectTypeOf<sdk.EffectView>().toEqualTypeOf<z.output<typeof s.effectViewResponse>>();
    expectTypeOf<sdk.Problem>().toEqualTypeOf<z.output<typeof s.problemSchema>>();
  });

  it('the SDK lists the same states, target types and problem codes as the server', () => {
    expectTypeOf<sdk.EffectState>().toEqualTypeOf<ServerEffectState>();
    expectTypeOf<sdk.TargetType>().toEqualTypeOf<ServerTargetType>();
    expectTypeOf<sdk.ProblemCode>().toEqualTypeOf<ServerProblemCode>();
  });
});
