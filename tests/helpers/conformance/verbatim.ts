// `npm run conformance -- tests/helpers/conformance/verbatim.ts`: must fail (K1, K3).
import { sample, verbatim } from './tools.ts';

export const conformance = [{ tool: verbatim, sample }];
