// Target normalization before keying (K3): one canonical spelling per real-world target, so that
// "Anna@Example.COM " and "anna@example.com" are one key. Invalid targets are refused, never guessed.
// Its one home is the SDK, next to the key derivation (./keys.ts); the server uses it through
// lib/ledger/normalize.ts.
import { domainToASCII } from 'node:url';
import { invalid } from './errors.ts';

export type TargetType = 'email' | 'phone' | 'url';

export function normalizeTarget(type: TargetType, raw: unknown, field = 'target'): string {
  if (typeof raw !== 'string') throw invalid(field, `${field} must be a string`);
  if (/\p{Cs}/u.test(raw)) throw invalid(field, `${field} is not well-formed Unicode (lone surrogate)`);
  switch (type) {
    case 'email':
      return normalizeEmail(raw, field);
    case 'phone':
      return normalizePhone(raw, field);
    case 'url':
      return normalizeUrl(raw, field);
    default:
      // Reached only when a caller bypasses the types: never key on an unnormalized target.
      throw invalid('targetType', `unknown target type "${String(type satisfies never)}"`);
  }
}

/** Unicode format characters (category Cf: U+200B zero-width space, U+202E right-to-left override,
 *  U+00AD soft hyphen, U+FEFF, U+2060 ...) are invisible: "anna\u200B@example.com" looks like
 *  anna@example.com but would be a second key. Refused rather than stripped, so that what is keyed is
 *  exactly what the caller can see; checked before trim(), which would silently drop U+FEFF. */
export function refuseFormatCharacters(raw: string, field = 'target'): void {
  const index = raw.search(/\p{Cf}/u);
  if (index < 0) return;
  const codePoint = raw.codePointAt(index)!.toString(16).toUpperCase().padStart(4, '0');
  throw invalid(
    field,
    `${field} contains an invisible format character (U+${codePoint}) at position ${index}: remove it`,
  );
}

// Printable, no whitespace, none of the characters that need quoting in a local part.
const LOCAL_PART = /^[^\s@<>()[\]\\,;:"\u0000-\u001f\u007f]+$/u;
const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Full case folding, approximated by lower-, upper- then lower-casing (ß -> SS -> ss, ς -> Σ -> σ)
 *  and repeated with NFC until nothing changes: one pass is not canonical (ẞ gave ß, which a second
 *  pass turned into ss), so two spellings of one address gave two keys. The dotless ı is left as it
 *  is, as full case folding leaves it: its capital is I, which folds to i, so the round trip would
 *  make ılker@ and ilker@ (two mailboxes) one key. */
export function caseFold(s: string): string {
  const fold = (text: string) => text.replace(/[^\u0131]+/g, (run) => run.toLowerCase().toUpperCase().toLowerCase());
  let current = s.normalize('NFC');
  for (let i = 0; i < 8; i++) {
    const next = fold(current.normalize('NFD')).normalize('NFC');
    if (next === current) return current;
    current = next;
  }
  return current;
}

export function normalizeEmail(raw: string, field = 'target'): string {
  refuseFormatCharacters(raw, field);
  const value = raw.trim().normalize('NFC');
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1)
    throw invalid(field, `${field} is not an email address: expected local@domain`);
  const local = caseFold(value.slice(0, at)).normalize('NFC');
  const domainInput = value.slice(at + 1).replace(/\.$/, '');
  // domainToASCII decodes percent-escapes (ex%2eample.com would become ex.ample.com): a domain has
  // none, so one is a malformed target, refused rather than guessed at (K3).
  if (domainInput.includes('%'))
    throw invalid(field, `${field}: the domain "${domainInput}" is not a valid domain name`);
  if (local.length > 64) throw invalid(field, `${field}: the part before @ is longer than 64 characters`);
  if (!LOCAL_PART.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    throw invalid(field, `${field}: the part before @ contains characters an address cannot have`);
  }
  // The domain is mapped by UTS #46 as IDNA2008 registries do (non-transitional, what WHATWG URL
  // uses), not by full case folding: straße.de and strasse.de are two registrable domains, and
  // folding ß to ss made two different mailboxes one key.
  const domain = domainToASCII(domainInput);
  if (!domain) throw invalid(field, `${field}: the domain "${domainInput}" is not a valid domain name`);
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => DOMAIN_LABEL.test(l)) || domain.length > 253) {
    throw invalid(field, `${field}: the domain "${domainInput}" is not a valid domain name`);
  }
  const address = `${local}@${domain}`;
  if (address.length > 254) throw invalid(field, `${field} is longer than 254 characters`);
  return address;
}

/** E.164: "+" then 8 to 15 digits, no leading zero in the country code. */
export function normalizePhone(raw: string, field = 'target'): string {
  refuseFormatCharacters(raw, field);
  // "+49 (0) 151 ..." writes the national trunk prefix in brackets: it is not dialled internationally.
  let value = raw
    .trim()
    .normalize('NFKC')
    .replace(/^(\+\d{1,3})[\s\u00a0]*\(0\)/, '$1')
    .replace(/[\s\-.()\u00a0]/g, '');
  if (value.startsWith('00')) value = `+${value.slice(2)}`;
  if (!value.startsWith('+')) {
    throw invalid(
      field,
      `${field}: a phone number needs its country code in international format, e.g. +4915112345678`,
    );
  }
  if (!/^\+[1-9]\d{7,14}$/.test(value)) {
    throw invalid(field, `${field} is not a phone number in E.164 form (+ and 8 to 15 digits)`);
  }
  return value;
}

const UNRESERVED = /%([0-9A-Fa-f]{2})/g;

/** WHATWG parsing (lower-case host, punycode, default port dropped, dot segments resolved), then:
 *  no fragment, no credentials, percent-escapes of unreserved characters decoded, others upper-cased. */
export function normalizeUrl(raw: string, field = 'target'): string {
  refuseFormatCharacters(raw, field);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid(field, `${field} is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid(field, `${field}: only http and https URLs are accepted`);
  if (url.username || url.password) throw invalid(field, `${field}: URLs with credentials are refused`);
  if (!url.hostname) throw invalid(field, `${field}: the URL has no host`);
  // "example.com." and "example.com" are one host: drop the root dot.
  if (url.hostname.endsWith('.') && url.hostname.length > 1) url.hostname = url.hostname.slice(0, -1);
  // WHATWG accepts hosts such as "a.com,https" (two URLs pasted as one): require a DNS name or an IP.
  if (!url.hostname.startsWith('[') && !url.hostname.split('.').every((l) => /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/.test(l))) {
    throw invalid(field, `${field}: "${url.hostname}" is not a valid host name`);
  }
  url.hash = '';
  const fixEscapes = (s: string) =>
    s.replace(UNRESERVED, (m, hex: string) => {
      const ch = String.fromCharCode(parseInt(hex, 16));
      return /[A-Za-z0-9\-._~]/.test(ch) ? ch : m.toUpperCase();
    });
  url.pathname = fixEscapes(url.pathname);
  if (url.search === '?') url.search = '';
  else url.search = fixEscapes(url.search);
  const out = url.toString();
  if (out.length > 2048) throw invalid(field, `${field} is longer than 2048 characters`);
  return out;
}

/** How a tool's record ids compare: `exact` (the default) keys them as spelled once normalized;
 *  `case-insensitive` (ids such as CUST-0301 and cust-0301 naming one record) case-folds them first. */
export type RecordIdCase = 'exact' | 'case-insensitive';

/**
 * A record id as it is keyed (K1, K3): the id the tool resolved, with the rules targets have where
 * they apply. An invisible format character is refused naming `recordId` (cust-\u200B0301 looks like
 * cust-0301 but would be a second key), surrounding whitespace is dropped, the rest is put in normal
 * form C, and a tool that declares its ids case-insensitive gets them case-folded. Compatibility
 * forms (fullwidth digits) are not folded: an id is the tool's own, and only its lookup can say
 * whether ０３０１ names the record 0301; the conformance check (K4) sends such spellings through the
 * tool's resolve step to find out.
 */
export function normalizeRecordId(raw: unknown, recordIds: RecordIdCase = 'exact', field = 'recordId'): string {
  if (typeof raw !== 'string') throw invalid(field, `${field} must be a string`);
  if (/\p{Cs}/u.test(raw)) throw invalid(field, `${field} is not well-formed Unicode (lone surrogate)`);
  refuseFormatCharacters(raw, field);
  const value = raw.trim().normalize('NFC');
  // A blank record id is no resolved record: refuse it rather than key on whitespace.
  if (value.length === 0 && raw.length > 0) throw invalid(field, `${field} must not be blank`);
  return recordIds === 'case-insensitive' ? caseFold(value) : value;
}
