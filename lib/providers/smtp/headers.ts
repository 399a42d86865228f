// Header values that every mail system can carry. RFC 5322 folds a header only at whitespace and caps
// a line at 998 characters (78 recommended). nodemailer folds at whitespace and encodes non-ASCII
// words, but leaves a run without whitespace as one line, however long: a 3,000-character subject
// without spaces became a 3,009-character line that relays may truncate or refuse. Such values are
// written as RFC 2047 encoded words instead: short ASCII chunks with spaces between them, which fold
// at 78 and which every reader (mailparser included) decodes back to the original text.

/** Longest whitespace-free run that still fits a folded line after "Subject: " and a leading space. */
const MAX_TOKEN = 66;
/** UTF-8 bytes per encoded word: 40 bytes -> 56 base64 characters -> a 68-character word. */
const WORD_BYTES = 40;

/** `value` unchanged when it folds at whitespace (and holds no "=?"), else as base64 encoded words (whole characters each). */
export function foldableHeaderValue(value: string): string {
  const tokens = value.split(/[ \t\r\n]+/);
  // Text that merely looks like an encoded word ("=?...?=") would be decoded by the reader: encode it.
  if (tokens.every((t) => t.length <= MAX_TOKEN) && !value.includes('=?')) return value;
  const words: string[] = [];
  let chunk = '';
  for (const char of value) {
    if (Buffer.byteLength(chunk + char, 'utf8') > WORD_BYTES) {
      words.push(encodedWord(chunk));
      chunk = '';
    }
    chunk += char;
  }
  if (chunk) words.push(encodedWord(chunk));
  return words.join(' ');
}

const encodedWord = (text: string) => `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
