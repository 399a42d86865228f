// The effect key (K1, K2) as the server uses it. The derivation's one home is lib/sdk/keys.ts: the
// SDK ships it for the conformance check (K4), so tool authors key with the server's own code. Here
// its refusals become LedgerError (422 naming the field), like every other refusal in lib/.
import * as sdk from '../sdk/keys.ts';
import { refusalsAsLedgerErrors } from './errors.ts';

export { KEY_VERSION, MAX_KEY_LENGTH, providerIdempotencyKey, type DerivedKey, type KeyInput } from '../sdk/keys.ts';
export const deriveKey = refusalsAsLedgerErrors(sdk.deriveKey);
export const parseKey = refusalsAsLedgerErrors(sdk.parseKey);
