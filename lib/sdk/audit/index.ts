// `@effect-ledger/sdk/audit`: the audit-export verifier as a function, for auditors who check an export
// in their own program rather than with `npm run audit:verify`. Node's `crypto` only, no database: it
// recomputes every entry's hash and link and, given signed checkpoints and their public keys, catches a
// rewound or rewritten chain (docs/AUDIT.md describes the algorithm).
export {
  ExportVerifier,
  verifyExport,
  verifyExportStream,
  type BrokenEntry,
  type ExportSummary,
  type ExportVerification,
} from './verify-export.ts';
export { canonicalV1, canonicalV2, entryHash, GENESIS_HASH, type ExportedEntry } from './canonical.ts';
export type { CheckpointInput } from './checkpoint-verify.ts';
export type { CheckpointsFile } from './checkpoint-signature.ts';
export {
  auditLeafHash,
  merkleLeafHash,
  nodeHash,
  TreeBuilder,
  verifyConsistency,
  verifyInclusion,
  rootFromInclusion,
} from './merkle.ts';
export { mergeNotes, openTreeHead, parseVkey, type OpenedHead } from './signed-note.ts';
export { verifyTreeEvidence, type TreeEvidence, type TreeVerification } from './tree-verify.ts';
export { bundleStatement, type BundleCoverage, type BundleTrust } from './bundle.ts';
