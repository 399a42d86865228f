// The management API's part of the OpenAPI document (lib/api/openapi.ts adds it): one operation per
// row of ./endpoints.ts, its request body the JSON Schema of the very zod schema the console's action
// parses, its errors the problem document every other operation answers with.
import { z } from 'zod';
import { MANAGE_ENDPOINTS } from './endpoints.ts';

type Json = Record<string, unknown>;

export const MANAGE_TAG = {
  name: 'Manage',
  description:
    "What a person decides or configures in the console, with a personal access token: acts with exactly the token's person's grants, and every decision names the version it was made on.",
} as const;

const ERRORS: Record<number, string> = {
  401: 'No personal access token, or an unknown, expired or revoked one, or its person is disabled.',
  403: "The token's person holds no role that may do this on the subject's workflow (the refusal is audited).",
  404: "Nothing there, or it is outside the token's person's workflows.",
  409: 'The version the decision names is stale (another person decided, or the state moved), or the transition is refused.',
  413: 'The body is over the size or nesting limit.',
  415: 'The body was sent with a Content-Type other than JSON.',
  422: 'Invalid input, or a decision without the version it was made on; `field` names the field (`seen`, `seenStatus`, `setHash`, ...).',
  429: 'Too many requests; retry after the Retry-After seconds.',
  500: 'A bug: the request may or may not have taken effect; check the audit trail.',
  503: 'The database cannot be reached now; nothing was changed; retry after the Retry-After seconds.',
};

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
};

function inputSchema(schema: z.ZodType): Json {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  return json;
}

/** The paths of the management operations, each answer's errors referring to `problemRef`. */
export function managePaths(problemRef: Json): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const e of MANAGE_ENDPOINTS) {
    const post = e.method === 'POST';
    const errors = post ? [401, 403, 404, 409, 413, 415, 422, 429, 500, 503] : [401, 404, 422, 429, 500, 503];
    const responses: Json = {
      200: {
        description: post ? 'Done: what the command returned.' : 'The view.',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    };
    for (const status of errors)
      responses[status] = {
        description: ERRORS[status],
        ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
        content: { 'application/problem+json': { schema: problemRef } },
      };
    const names = [...e.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const operation: Json = {
      operationId: e.id,
      tags: [MANAGE_TAG.name],
      summary: e.summary,
      description: e.description,
      security: [{ personalToken: [] }],
      responses,
    };
    if (names.length)
      operation.parameters = names.map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: name === 'key' ? { type: 'string', minLength: 1, maxLength: 4096 } : { type: 'string', format: 'uuid' },
      }));
    if (e.method === 'POST')
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: inputSchema(e.decision.schema) } },
      };
    paths[e.path] = { ...(paths[e.path] ?? {}), [e.method.toLowerCase()]: operation };
  }
  return paths;
}

export const PERSONAL_TOKEN_SCHEME = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'elp_<prefix>_<secret>',
  description: "A person's access token, created at /account/tokens in the console (shown once).",
};
