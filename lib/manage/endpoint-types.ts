// The shape of a management API operation (./endpoints.ts lists them): a decision, run through the
// console's Decision, or a read of one of the console's views.
import type { z } from 'zod';
import type { Decision } from '../auth/decision.ts';
import type { Guarded } from '../auth/guard.ts';
import type { Permission } from '../auth/permissions.ts';
import type { SP } from '../read-models/views/query.ts';

export type Params = Record<string, string>;

interface Base {
  /** The path under /api/v1, with {param} segments. */
  path: string;
  id: string;
  summary: string;
  description: string;
}
export interface DecisionEndpoint extends Base {
  method: 'POST';
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of decisions of every input and result type
  decision: Decision<z.ZodType, any>;
}
export interface ReadEndpoint extends Base {
  method: 'GET';
  /** console.read unless named (the audit export needs audit.export). */
  permission?: Permission;
  /** The view as JSON, or a Response of its own (a streamed download). */
  read: (g: Guarded, params: Params, sp: SP, request: Request) => Promise<object | null>;
}
export type ManageEndpoint = DecisionEndpoint | ReadEndpoint;
