// Reading an agent API request's body: at most MAX_BODY_BYTES of UTF-8 JSON nested at most
// MAX_BODY_DEPTH levels. Anything else is refused (413 or 422, naming the body) before it is parsed
// further, hashed or validated, so that no body, however large, deep or strange, reaches the ledger.
import { invalid, LedgerError } from '../core/errors.ts';

/** Limits of a request body: bigger or deeper bodies get 413 and change nothing. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
export const MAX_BODY_DEPTH = 32;

/** The body as JSON (undefined when empty). `received`: the bytes a server in front already read
 *  (scripts/support/api-router.ts), checked the same way without a second pass through a stream. */
export async function readJson(request: Request, received?: Uint8Array): Promise<unknown> {
  const text = received ? decodeBody(received) : await readBodyText(request);
  if (text.trim() === '') return undefined;
  checkMediaType(request.headers.get('content-type'));
  const depth = nestingDepth(text);
  if (depth > MAX_BODY_DEPTH) {
    throw new LedgerError('payload_too_large', `body: nested ${depth} levels deep; the limit is ${MAX_BODY_DEPTH}`, {
      field: 'body',
      limit: MAX_BODY_DEPTH,
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid('body', `body: not valid JSON (${(error as Error).message})`);
  }
}

/** A body must be sent as JSON: `application/json` or a `+json` type, any parameters. Without a
 *  Content-Type, or as `text/plain` (what fetch sends for a string body when the caller sets no
 *  type), it is read as JSON too; a form, multipart, XML or any other type is refused, so a body
 *  meant as something else is never taken for an instruction. */
function checkMediaType(header: string | null): void {
  if (header === null) return;
  const type = header.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type === 'text/plain') return;
  if (/^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(type)) return;
  throw new LedgerError(
    'unsupported_media_type',
    `content-type: the body must be sent as application/json, not ${JSON.stringify(type)}`,
    { field: 'content-type' },
  );
}

const tooLarge = () =>
  new LedgerError('payload_too_large', `body: larger than ${MAX_BODY_BYTES} bytes`, {
    field: 'body',
    limit: MAX_BODY_BYTES,
  });

/** The body as UTF-8 text, read with a byte cap so a chunked upload cannot grow without bound. */
async function readBodyText(request: Request): Promise<string> {
  if (Number(request.headers.get('content-length') ?? '0') > MAX_BODY_BYTES) throw tooLarge();
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return decodeBody(Buffer.concat(chunks));
}

function decodeBody(bytes: Uint8Array): string {
  if (bytes.byteLength > MAX_BODY_BYTES) throw tooLarge();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalid('body', 'body: not valid UTF-8');
  }
}

/** How deep arrays and objects nest in JSON text (strings skipped): checked before parsing, since
 *  the recursive steps after it (field checks, canonical hashing, JSON output) overflow the stack on
 *  tens of thousands of levels. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) max = Math.max(max, ++depth);
    else if (c === 93 || c === 125) depth--;
  }
  return max;
}
