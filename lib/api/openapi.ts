// The OpenAPI 3.1 document of /api/v1, generated from the zod schemas in lib/api/schemas.ts (never
// written by hand). Components come from apiRegistry; each operation refers to them by $ref.
import { MAX_BODY_BYTES, MAX_BODY_DEPTH } from './request-body.ts';
import { z } from 'zod';
import * as s from './schemas.ts';
import * as tree from './tree-schemas.ts';
import { MANAGE_TAG, managePaths, PERSONAL_TOKEN_SCHEME } from '../manage/openapi.ts';

type Json = Record<string, unknown>;

/** Operations are grouped by what they act on; generated clients and the docs page list them so. */
const TAGS = [
  { name: 'Runs', description: 'A run of a workflow for one trigger occurrence: its plan, its states, its replay.' },
  { name: 'Effects', description: 'Claim an effect before the provider call, report its outcome, report a deletion.' },
  { name: 'Attempts', description: "An attempt's raw provider response (R1)." },
  { name: 'Audit', description: 'The signed Merkle tree over the whole audit trail: heads and proofs (A2).' },
] as const;

/** The project's terms (package.json `license`); tests/integration/api-openapi-client.test.ts keeps them equal. */
export const API_LICENSE = 'UNLICENSED';

interface Op {
  method: 'get' | 'post';
  path: string;
  id: string;
  tag: (typeof TAGS)[number]['name'];
  summary: string;
  description: string;
  body?: z.ZodType;
  params?: string[];
  responses: Record<number, { schema: z.ZodType; description: string }>;
  errors: number[];
}

const ref = (schema: z.ZodType): Json => {
  const meta = s.apiRegistry.get(schema);
  if (!meta) throw new Error('every schema used by an operation must be named in apiRegistry');
  return { $ref: `#/components/schemas/${meta.id}` };
};

/** Retry-After on the answers that ask the client to come back (lib/api/problem.ts sets it). */
const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before retrying with the same Idempotency-Key.',
    schema: { type: 'integer', minimum: 0 },
  },
};

const ERRORS: Record<number, string> = {
  401: 'No runtime key, or an unknown or revoked one (the refusal is audited).',
  403: 'The runtime key is not scoped to this workflow (the refusal is audited).',
  404: 'The run, effect or attempt does not exist.',
  409: 'State conflict: a concurrent request with the same Idempotency-Key is in progress, or the transition is not allowed.',
  413: `The body is over the size limit (${MAX_BODY_BYTES} bytes, also when sent chunked) or nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep; nothing was written.`,
  415: 'The body was sent with a Content-Type other than `application/json`, another `+json` type or `text/plain`; nothing was written.',
  422: 'Invalid input, or an Idempotency-Key reused with a different body. `field` names the field.',
  429: 'Too many requests from this source; retry after the Retry-After seconds.',
  500: 'A bug: the request may or may not have taken effect; retry with the same Idempotency-Key.',
  503: 'The database cannot be reached now; nothing was changed; retry after the Retry-After seconds.',
};

/** Path parameters that are not uuids. */
const PATH_PARAMS: Record<string, Json> = {
  key: { type: 'string', minLength: 1, maxLength: 4096, description: 'The effect key, percent-encoded.' },
  size: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$', description: 'A tree size (number of leaves).' },
  entryId: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$', description: 'An audit entry id.' },
  from: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$', description: 'The smaller tree size.' },
  to: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$', description: 'The larger tree size.' },
};

/** Every operation can answer these, whatever it does. */
const ALWAYS = [429, 500, 503];

export const OPERATIONS: Op[] = [
  {
    method: 'post',
    path: '/runs',
    id: 'createRun',
    tag: 'Runs',
    summary: 'Create a run',
    description:
      'A run of a workflow for one trigger occurrence (event id or scheduled occurrence id). Every key of the run derives from the trigger, so a retried run of the same event sees what is already done.',
    body: s.createRunBody,
    responses: { 201: { schema: s.createRunResponse, description: 'The run.' } },
    errors: [401, 403, 422],
  },
  {
    method: 'get',
    path: '/runs/{runId}',
    id: 'readRun',
    tag: 'Runs',
    summary: 'Read a run with its plan and states',
    description:
      'The union of the plan and the ledger (P3): every planned target with its state, who changed it last and when, and keys of the same trigger that are not in the plan.',
    params: ['runId'],
    responses: { 200: { schema: s.runViewResponse, description: 'The run.' } },
    errors: [401, 403, 404, 422],
  },
  {
    method: 'post',
    path: '/runs/{runId}/plan',
    id: 'submitPlan',
    tag: 'Runs',
    summary: 'Submit a plan for approval',
    description:
      'Targets are normalized and keyed on the server. Invalid items are rejected one by one with reasons in `error.details.items`; nothing is written for a rejected plan.',
    params: ['runId'],
    body: s.submitPlanBody,
    responses: {
      201: { schema: s.submitPlanResponse, description: 'The submitted plan, awaiting approval in the console.' },
    },
    errors: [401, 403, 404, 409, 422],
  },
  {
    method: 'post',
    path: '/runs/{runId}/replay',
    id: 'replayRun',
    tag: 'Runs',
    summary: 'Ask to replay a run',
    description:
      "F6: 409 with every target's state when any effect of the run is pending past its lease, unknown or stuck (the console is the way forward); otherwise 202 with what may proceed. Proceeding still claims each target through POST /effects/claim.",
    params: ['runId'],
    body: s.replayBody,
    responses: {
      202: { schema: s.replayAccepted, description: 'What may proceed and what is skipped.' },
      409: { schema: s.replayBlocked, description: 'Blocked: resolve these targets in the console first.' },
    },
    errors: [401, 403, 404, 422],
  },
  {
    method: 'post',
    path: '/effects/claim',
    id: 'claimEffect',
    tag: 'Effects',
    summary: 'Claim an effect before calling the provider',
    description:
      'The key is derived on the server from the registered tool definition: (trigger, tool, action, record, normalized target). Of any number of concurrent claimers exactly one gets 201; everyone else gets 200 and must skip the provider call.',
    body: s.claimBody,
    responses: {
      201: { schema: s.claimWon, description: 'Claimed: call the provider with `idempotencyKey`.' },
      200: { schema: s.claimLost, description: 'Not claimed: skip.' },
    },
    errors: [401, 403, 404, 422],
  },
  {
    method: 'post',
    path: '/attempts/{attemptId}/response',
    id: 'recordResponse',
    tag: 'Attempts',
    summary: "Store an attempt's raw provider response",
    description:
      'R1: status, header pairs in order and the body bytes (base64) exactly as received, stored before anything parses them. Once per attempt.',
    params: ['attemptId'],
    body: s.attemptResponseBody,
    responses: { 201: { schema: s.attemptRecorded, description: 'Stored.' } },
    errors: [401, 403, 404, 409, 422],
  },
  {
    method: 'get',
    path: '/effects/{key}',
    id: 'readEffect',
    tag: 'Effects',
    summary: 'Read one effect',
    description:
      'The effect\'s current epoch: state, who changed it and when, the receipt, and the raw response its latest attempt stored (R1). The key is one path segment: percent-encode it (its "/" become %2F). 404 when no effect has this key.',
    params: ['key'],
    responses: { 200: { schema: s.effectViewResponse, description: 'The effect.' } },
    errors: [401, 403, 404, 422],
  },
  {
    method: 'post',
    path: '/effects/outcome',
    id: 'reportOutcome',
    tag: 'Effects',
    summary: 'Report the outcome of an effect',
    description:
      'done (with a receipt that can be looked up later), failed (a definitive rejection, with the provider response as evidence; frees the key), unknown (ambiguous: timeout, 5xx, crash), or stuck (issued but permanently uncompletable).',
    body: s.outcomeBody,
    responses: { 200: { schema: s.effectStateResponse, description: 'The new state.' } },
    errors: [401, 403, 404, 409, 422],
  },
  {
    method: 'post',
    path: '/effects/deletion',
    id: 'reportDeletion',
    tag: 'Effects',
    summary: 'Report the deletion of what an effect produced',
    description:
      'V1, V2: revokes the key in the same transaction that records the deletion, and returns the deterministic successor id (UUIDv5 of the deleted id and the deletion time) that a redo must use. Repeating the report returns the same successor.',
    body: s.deletionBody,
    responses: { 200: { schema: s.deletionResponse, description: 'Revoked.' } },
    errors: [401, 403, 404, 409, 422],
  },
  {
    method: 'get',
    path: '/audit/tree/head',
    id: 'readTreeHead',
    tag: 'Audit',
    summary: 'The newest signed head of the audit tree',
    description:
      "A C2SP checkpoint note (origin, size, base64 root) signed by the ledger with a timestamped Ed25519 signature, with the cosignatures witnesses submitted for it. Verify it with the log's verifier key before trusting it.",
    responses: { 200: { schema: tree.treeHeadResponse, description: 'The head.' } },
    errors: [401, 404],
  },
  {
    method: 'post',
    path: '/audit/tree/cosignature',
    id: 'submitCosignature',
    tag: 'Audit',
    summary: "Submit a witness's cosignature of a signed tree head",
    description:
      "The note is a head the ledger signed with the witness's timestamped Ed25519 cosignature line. It is stored, and served with the head, only when a line verifies against a witness key the ledger is configured with (AUDIT_WITNESS_KEYS); 403 when no line is from a configured witness, 422 when the note is malformed, names no head the ledger signed, or a configured witness's line does not verify.",
    body: tree.cosignatureBody,
    responses: { 201: { schema: tree.cosignatureResponse, description: 'Stored.' } },
    errors: [401, 403, 422],
  },
  {
    method: 'get',
    path: '/audit/tree/inclusion/{size}/{entryId}',
    id: 'readInclusionProof',
    tag: 'Audit',
    summary: 'Inclusion proof of an audit entry',
    description:
      "RFC 9162 inclusion proof of the entry as a leaf of the tree of `size` leaves. 404 when the entry is not (yet) in the tree; 422 when `size` is beyond the tree or below the entry's leaf.",
    params: ['size', 'entryId'],
    responses: { 200: { schema: tree.inclusionResponse, description: 'The proof.' } },
    errors: [401, 404, 422],
  },
  {
    method: 'get',
    path: '/audit/tree/consistency/{from}/{to}',
    id: 'readConsistencyProof',
    tag: 'Audit',
    summary: 'Consistency proof between two tree sizes',
    description:
      'RFC 9162 proof that the tree of `from` leaves is a prefix of the tree of `to` leaves. 422 when from > to or to is beyond the tree.',
    params: ['from', 'to'],
    responses: { 200: { schema: tree.consistencyResponse, description: 'The proof.' } },
    errors: [401, 422],
  },
];

let cached: Json | undefined;

export function openApiDocument(): Json {
  if (cached) return cached;
  const { schemas } = z.toJSONSchema(s.apiRegistry, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const responses: Json = {};
    for (const [status, r] of Object.entries(op.responses))
      responses[status] = {
        description: r.description,
        content: {
          [Number(status) >= 400 ? 'application/problem+json' : 'application/json']: { schema: ref(r.schema) },
        },
      };
    for (const status of [...op.errors, ...(op.body ? [413, 415] : []), ...ALWAYS])
      if (!responses[status])
        responses[status] = {
          description: ERRORS[status],
          ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
          content: { 'application/problem+json': { schema: ref(s.problemSchema) } },
        };
    const parameters: Json[] = (op.params ?? []).map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: PATH_PARAMS[name] ?? { type: 'string', format: 'uuid' },
    }));
    if (op.method === 'post') {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
        description:
          'Z5: a retry with the same key returns the first response; the same key with a different body is refused (422); a concurrent duplicate gets 409.',
      });
    }
    const operation: Json = {
      operationId: op.id,
      tags: [op.tag],
      summary: op.summary,
      description: op.description,
      responses,
    };
    if (parameters.length) operation.parameters = parameters;
    if (op.body) operation.requestBody = { required: true, content: { 'application/json': { schema: ref(op.body) } } };
    paths[op.path] = { ...(paths[op.path] ?? {}), [op.method]: operation };
  }
  Object.assign(paths, managePaths(ref(s.problemSchema)));
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Effect Ledger agent API',
      version: '1.0.0',
      description:
        'How agent runtimes claim and report every side effect, and how people manage the ledger from scripts (the Manage operations). Authenticate with `Authorization: Bearer <runtime key>`, or for Manage with a personal access token. Every agent POST honours `Idempotency-Key` (a Manage decision is made safe to retry by the version it names instead). Every 4xx and 5xx answer is an RFC 9457 problem document (`application/problem+json`: type, title, status, detail, code, field?, and details); 429 and 503 carry `Retry-After`.',
      license: { name: API_LICENSE },
    },
    servers: [{ url: '/api/v1' }],
    tags: [...TAGS, MANAGE_TAG],
    security: [{ runtimeKey: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        personalToken: PERSONAL_TOKEN_SCHEME,
        runtimeKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'elk_<prefix>_<secret>',
          description: 'A per-runtime key created by an admin (npm run runtime-key:create).',
        },
      },
    },
  };
  return cached;
}
