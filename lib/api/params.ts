import { z } from 'zod';

export const runParams = z.strictObject({ runId: z.uuid() });
export const attemptParams = z.strictObject({ attemptId: z.uuid() });
