// Target normalization (K3) as the server uses it. Its one home is lib/sdk/normalize.ts (shipped with
// the key derivation); here its refusals become LedgerError (422 naming the field).
import * as sdk from '../sdk/normalize.ts';
import { refusalsAsLedgerErrors } from './errors.ts';

export type { TargetType } from '../sdk/normalize.ts';
export const normalizeTarget = refusalsAsLedgerErrors(sdk.normalizeTarget);
export const normalizeEmail = refusalsAsLedgerErrors(sdk.normalizeEmail);
export const normalizePhone = refusalsAsLedgerErrors(sdk.normalizePhone);
export const normalizeUrl = refusalsAsLedgerErrors(sdk.normalizeUrl);
