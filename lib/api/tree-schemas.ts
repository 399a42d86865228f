// Path parameters and answers of the audit tree's read API (docs/AUDIT.md), named in apiRegistry so
// the OpenAPI document (./openapi.ts) refers to them like every other schema.
import { z } from 'zod';
import { apiRegistry } from './schemas.ts';

const count = (what: string) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]{0,14})$/, `${what} is a whole number without leading zeros`)
    .transform(Number);

export const inclusionParams = z.strictObject({ size: count('size'), entryId: count('entryId') });
export const consistencyParams = z.strictObject({ from: count('from'), to: count('to') });

const base64Hash = z.string().regex(/^[A-Za-z0-9+/]{43}=$/);

export const treeHeadResponse = z.object({
  note: z
    .string()
    .describe("The signed tree head: a C2SP checkpoint note with the log's signature and any witness cosignatures."),
  size: z.number().int().min(0),
  root: base64Hash,
});
export const inclusionResponse = z.object({
  entry_id: z.string(),
  chain: z.string(),
  seq: z.number().int(),
  entry_hash: z.string().regex(/^[0-9a-f]{64}$/),
  leaf_index: z.number().int().min(0),
  tree_size: z.number().int().min(1),
  proof: z.array(base64Hash),
});
export const consistencyResponse = z.object({
  from: z.number().int().min(0),
  to: z.number().int().min(0),
  proof: z.array(base64Hash),
});

export const cosignatureBody = z.strictObject({
  note: z
    .string()
    .min(1)
    .max(64 * 1024)
    .describe("A head the ledger signed, with the witness's cosignature line (C2SP tlog-cosignature)."),
});
export const cosignatureResponse = z.object({
  size: z.number().int().min(0),
  witnesses: z.array(z.string()).describe('The configured witnesses whose cosignature lines verified and were stored.'),
});

apiRegistry.add(cosignatureBody, { id: 'CosignatureSubmission', description: "A witness's cosigned head." });
apiRegistry.add(cosignatureResponse, { id: 'CosignatureReceipt', description: 'The cosignatures stored.' });
apiRegistry.add(treeHeadResponse, { id: 'TreeHead', description: 'The newest signed head of the audit tree.' });
apiRegistry.add(inclusionResponse, {
  id: 'InclusionProof',
  description: 'RFC 9162 inclusion proof of one audit entry.',
});
apiRegistry.add(consistencyResponse, {
  id: 'ConsistencyProof',
  description: 'RFC 9162 consistency proof between two tree sizes.',
});
