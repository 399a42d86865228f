// The signer's own database connection (docs/AUDIT.md, "Who may write signatures"). Stored checkpoints
// and tree heads are writable only by the ledger_audit_signer role (and the owner): the application
// role that serves the API and the console may read them, never add one, so nothing that can run as
// the application can plant a checkpoint every auditor would then be handed. The signing round and the
// tree signer connect with AUDIT_SIGNER_DATABASE_URL (a login in ledger_audit_signer), or else with
// the owner's MIGRATION_DATABASE_URL the worker already holds for its queue schema.
export interface SignerConnectionSettings {
  AUDIT_SIGNER_DATABASE_URL?: string;
  MIGRATION_DATABASE_URL?: string;
}

export const SIGNER_CONNECTION_MISSING =
  'neither AUDIT_SIGNER_DATABASE_URL nor MIGRATION_DATABASE_URL is set: only the signer role (or the owner) may store signatures';

/** The URL the signer stores its signatures with, or null when none is configured. */
export function signerDatabaseUrl(e: SignerConnectionSettings): string | null {
  return e.AUDIT_SIGNER_DATABASE_URL ?? e.MIGRATION_DATABASE_URL ?? null;
}
