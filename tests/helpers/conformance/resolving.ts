// `npm run conformance -- tests/helpers/conformance/resolving.ts`: must pass (K1, K3).
import { resolving, sample } from './tools.ts';

export const conformance = [{ tool: resolving, sample }];
