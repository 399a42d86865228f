// K3: targets are normalized per type before keying; invalid targets are refused with a clear error.
import { describe, expect, it } from 'vitest';
import {
  deriveKey,
  LedgerError,
  normalizeEmail,
  normalizePhone,
  normalizeTarget,
  normalizeUrl,
  type TargetType,
} from '@/lib/ledger/index.ts';

function refusal(fn: () => unknown): LedgerError {
  try {
    fn();
  } catch (error) {
    if (error instanceof LedgerError) return error;
    throw new Error(`expected a LedgerError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a LedgerError, nothing was thrown');
}

describe('K3: email', () => {
  it.each([
    ['  anna@example.com\t', 'anna@example.com', 'trim'],
    ['Anna@Example.COM', 'anna@example.com', 'case fold'],
    ['STRASSE@example.com', 'strasse@example.com', 'case fold'],
    ['straße@example.com', 'strasse@example.com', 'full case folding: ß -> ss'],
    ['STRAẞE@example.com', 'strasse@example.com', 'capital sharp s: ẞ -> ss, like ß'],
    ['ﬀ@example.com', 'ff@example.com', 'ligature folds'],
    ['ΣΑΣ@example.com', 'σας@example.com', 'Greek sigma'],
    ['cafe\u0301@example.com', 'caf\u00e9@example.com', 'Unicode NFC'],
    ['caf\u00e9@example.com', 'caf\u00e9@example.com', 'already NFC'],
    ['user@bücher.de', 'user@xn--bcher-kva.de', 'IDN domain to punycode'],
    ['user@BÜCHER.DE', 'user@xn--bcher-kva.de', 'IDN domain, upper case'],
    ['user@xn--bcher-kva.de', 'user@xn--bcher-kva.de', 'punycode already'],
    ['user@例え.jp', 'user@xn--r8jz45g.jp', 'IDN (Japanese)'],
    ['user@example.com.', 'user@example.com', 'trailing root dot'],
    ['user@straße.de', 'user@xn--strae-oqa.de', 'IDNA2008: ß in a domain is kept (a different domain from strasse.de)'],
    ['user@STRASSE.de', 'user@strasse.de', 'ASCII domain lower-cased'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk', 'plus and dots kept'],
  ])('K3: %j -> %j (%s)', (raw, expected) => {
    expect(normalizeEmail(raw)).toBe(expected);
    expect(normalizeTarget('email', raw)).toBe(expected);
    // Idempotent: the normal form is its own normal form.
    expect(normalizeEmail(expected)).toBe(expected);
  });

  it('K3: property: 20,000 generated addresses: the normal form is idempotent and the same for NFC, NFD, lower- and upper-case local parts', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const letters = [
      'a',
      'Z',
      'ß',
      'ẞ',
      'İ',
      'ı',
      'ς',
      'Σ',
      'σ',
      'ǅ',
      'ǆ',
      'Ǆ',
      'ﬀ',
      'ſ',
      'K',
      'Å',
      'Å',
      'é',
      'ΐ',
      'ŉ',
      'Ω',
      'ω',
      'Ω',
      '.',
      '+',
      '-',
      '_',
      '中',
      'ﬅ',
      'ᾳ',
      'ᾼ',
      'ϐ',
      'ϑ',
      'ϕ',
      'ϵ',
      'ẛ',
      'ῼ',
      'Ż',
      'i',
    ];
    const marks = ['e\u0301', '\u0345', '\u0307', 'ǰ', '😀'];
    const domains = ['example.com', 'BÜCHER.de', 'straße.de', 'ΣΑΣ.gr', 'İstanbul.tr', 'ẞ.de'];
    const problems: string[] = [];
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const withMarks = i % 2 === 1;
      const pool = withMarks ? [...letters, ...marks] : letters;
      const local = Array.from(
        { length: 1 + Math.floor(random() * 5) },
        () => pool[Math.floor(random() * pool.length)],
      ).join('');
      const domain = domains[Math.floor(random() * domains.length)]!;
      const raw = `${local}@${domain}`;
      let normal: string;
      try {
        normal = normalizeEmail(raw);
      } catch {
        continue;
      }
      accepted++;
      // Upper-casing text with combining marks can move a mark to another letter (a different
      // address), so that spelling is only compared for mark-free addresses.
      // Case variants touch the local part only: upper-casing "straße.de" names another domain.
      const spellings = [
        normal,
        `${local.toLowerCase()}@${domain}`,
        raw.normalize('NFD'),
        raw.normalize('NFC'),
        // Upper-casing the dotless ı gives I, the capital of i: another mailbox under case folding.
        ...(withMarks || local.includes('\u0131') ? [] : [`${local.toUpperCase()}@${domain}`]),
      ];
      for (const spelling of spellings) {
        const again = normalizeEmail(spelling);
        if (again !== normal)
          problems.push(`${JSON.stringify(raw)} as ${JSON.stringify(spelling)}: ${normal} vs ${again}`);
      }
    }
    expect(problems.slice(0, 5)).toEqual([]);
    expect(accepted).toBeGreaterThan(2_000);
  }, 30_000);

  it('K3: the dotless ı and i are two mailboxes, as full case folding has it; ILKER is ilker', () => {
    expect(normalizeEmail('ılker@example.com')).toBe('ılker@example.com');
    expect(normalizeEmail('ılker@example.com')).not.toBe(normalizeEmail('ilker@example.com'));
    expect(normalizeEmail('ILKER@example.com')).toBe('ilker@example.com');
  });

  it('K3: two different registrable domains never share a key (straße.de vs strasse.de)', () => {
    expect(normalizeEmail('anna@straße.de')).not.toBe(normalizeEmail('anna@strasse.de'));
    expect(normalizeEmail('anna@ΣΑΣ.gr')).not.toBe(normalizeEmail('anna@σας.gr'));
  });

  it('K3: spellings of one address give one key', () => {
    const key = (target: string) =>
      deriveKey({ triggerId: 'e', tool: 't', action: 'a', recordId: 'r', targetType: 'email', target }).key;
    expect(
      new Set(['Anna@Bücher.de', ' anna@BÜCHER.de ', 'anna@xn--bcher-kva.de', 'ANNA@xn--BCHER-KVA.de'].map(key)).size,
    ).toBe(1);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'blank'],
    ['anna', 'no @'],
    ['@example.com', 'no local part'],
    ['anna@', 'no domain'],
    ['a@b@example.com', 'two @'],
    ['an na@example.com', 'space in local part'],
    ['"anna"@example.com', 'quoted local part'],
    ['.anna@example.com', 'leading dot'],
    ['anna.@example.com', 'trailing dot'],
    ['an..na@example.com', 'double dot'],
    ['anna@localhost', 'single-label domain'],
    ['anna@exa_mple.com', 'underscore in domain'],
    ['anna@-example.com', 'label starts with a hyphen'],
    ['anna@example..com', 'empty label'],
    [`${'a'.repeat(65)}@example.com`, 'local part over 64'],
    ['anna@example.com, bob@example.com', 'two addresses'],
    ['anna\u0000@example.com', 'control character'],
    ['anna@ex%2eample.com', 'percent-escape in the domain (not decoded into another domain)'],
    ['anna@%65xample.com', 'percent-escape of a letter in the domain'],
  ])('K3: invalid email %j (%s) is refused with code validation, field target', (raw) => {
    const error = refusal(() => normalizeTarget('email', raw));
    expect(error.code).toBe('validation');
    expect(error.details.field).toBe('target');
    expect(error.message.length).toBeGreaterThan(10);
  });
});

describe('K3: phone', () => {
  it.each([
    ['+49 151 1234 5678', '+4915112345678'],
    ['+1 (415) 555-2671', '+14155552671'],
    ['+1.415.555.2671', '+14155552671'],
    ['0049 151 12345678', '+4915112345678'],
    ['  +44 20 7946 0958 ', '+442079460958'],
    ['\uff0b\uff14\uff19\uff11\uff15\uff11\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18', '+4915112345678'],
    ['+4915112345678', '+4915112345678'],
    ['+49 (0) 151 12345678', '+4915112345678'],
    ['+44 (0)20 7946 0958', '+442079460958'],
  ])('K3: %j -> %j (E.164)', (raw, expected) => {
    expect(normalizePhone(raw)).toBe(expected);
    expect(normalizeTarget('phone', raw)).toBe(expected);
    expect(normalizePhone(expected)).toBe(expected);
  });

  it.each([
    ['', 'empty'],
    ['0151 12345678', 'national format without country code'],
    ['+0 151 12345678', 'country code starts with 0'],
    ['+49 151', 'too short'],
    ['+1234567890123456', 'more than 15 digits'],
    ['+49 151 CALL-NOW', 'letters'],
    ['+4915112345678,+4915112345679', 'two numbers'],
    ['+49 151 1234 5678 ext. 12', 'extension'],
  ])('K3: invalid phone %j (%s) is refused with code validation, field target', (raw) => {
    const error = refusal(() => normalizeTarget('phone', raw));
    expect(error.code).toBe('validation');
    expect(error.details.field).toBe('target');
  });
});

describe('K3: URL', () => {
  it.each([
    ['HTTPS://Example.COM', 'https://example.com/', 'scheme and host lower-cased, root path'],
    ['https://example.com:443/a', 'https://example.com/a', 'default port dropped'],
    ['http://example.com:80/a', 'http://example.com/a', 'default port dropped (http)'],
    ['https://example.com:8443/a', 'https://example.com:8443/a', 'other port kept'],
    ['https://example.com/a/./b/../c', 'https://example.com/a/c', 'dot segments resolved'],
    ['https://example.com/a#section', 'https://example.com/a', 'fragment dropped'],
    ['https://example.com/%7euser/%41', 'https://example.com/~user/A', 'unreserved escapes decoded'],
    ['https://example.com/a%2fb', 'https://example.com/a%2Fb', 'reserved escapes kept, upper-cased'],
    ['https://example.com/?q=%7e', 'https://example.com/?q=~', 'query escapes'],
    ['https://example.com/a?', 'https://example.com/a', 'empty query dropped'],
    ['https://bücher.de/x', 'https://xn--bcher-kva.de/x', 'IDN host to punycode'],
    ['  https://example.com/a  ', 'https://example.com/a', 'trim'],
    ['http://[::1]:8080/hook', 'http://[::1]:8080/hook', 'IPv6 host'],
    ['http://192.168.0.1/hook', 'http://192.168.0.1/hook', 'IPv4 host'],
    ['https://Example.com./x', 'https://example.com/x', 'root dot of the host dropped'],
  ])('K3: %j -> %j (%s)', (raw, expected) => {
    expect(normalizeUrl(raw)).toBe(expected);
    expect(normalizeTarget('url', raw)).toBe(expected);
    expect(normalizeUrl(expected)).toBe(expected);
  });

  it.each([
    ['', 'empty'],
    ['example.com/a', 'not absolute'],
    ['/relative/path', 'relative'],
    ['ftp://example.com/file', 'not http(s)'],
    ['javascript:alert(1)', 'script'],
    ['mailto:anna@example.com', 'mailto'],
    ['https://user:secret@example.com/', 'credentials'],
    ['https://a.example.com,https://b.example.com', 'two URLs pasted as one'],
    [`https://example.com/${'a'.repeat(2100)}`, 'too long'],
  ])('K3: invalid URL %j (%s) is refused with code validation, field target', (raw) => {
    const error = refusal(() => normalizeTarget('url', raw));
    expect(error.code).toBe('validation');
    expect(error.details.field).toBe('target');
  });
});

describe('K3: any target type', () => {
  it('K3: a non-string, a lone surrogate or an unknown target type is refused, never keyed as is', () => {
    for (const type of ['email', 'phone', 'url'] as TargetType[]) {
      for (const raw of [null, 42, ['a@example.com'], { to: 'a@example.com' }, 'x\uD800@example.com']) {
        const error = refusal(() => normalizeTarget(type, raw));
        expect(error.code).toBe('validation');
        expect(error.details.field).toBe('target');
      }
    }
    const unknownType = refusal(() => normalizeTarget('fax' as TargetType, '+4915112345678'));
    expect(unknownType.code).toBe('validation');
    expect(unknownType.details.field).toBe('targetType');
  });

  it('K3: deriveKey normalizes before keying and refuses an invalid target naming the field "target"', () => {
    const input = { triggerId: 'e', tool: 't', action: 'a', recordId: 'r' };
    expect(deriveKey({ ...input, targetType: 'phone', target: '+1 (415) 555-2671' }).target).toBe('+14155552671');
    const error = refusal(() => deriveKey({ ...input, targetType: 'email', target: 'not an address' }));
    expect(error.code).toBe('validation');
    expect(error.details.field).toBe('target');
  });
});

describe('K3: invisible format characters (Unicode category Cf)', () => {
  // Each of these renders as nothing (or reorders text), so the address looks like anna@example.com.
  const formatCharacters: [string, string][] = [
    ['\u200b', 'zero-width space'],
    ['\u200c', 'zero-width non-joiner'],
    ['\u200d', 'zero-width joiner'],
    ['\u200e', 'left-to-right mark'],
    ['\u202e', 'right-to-left override'],
    ['\u2066', 'left-to-right isolate'],
    ['\u00ad', 'soft hyphen'],
    ['\ufeff', 'byte order mark'],
    ['\u2060', 'word joiner'],
    ['\u061c', 'Arabic letter mark'],
    ['\u{e0041}', 'tag latin capital A'],
  ];
  const placements = [
    (c: string) => `an${c}na@example.com`,
    (c: string) => `anna@exa${c}mple.com`,
    (c: string) => `${c}anna@example.com`,
    (c: string) => `anna@example.com${c}`,
  ];

  it.each(formatCharacters)(
    'K3: %j (%s) anywhere in an email target is refused naming target and the code point; never keyed as a second mailbox',
    (char) => {
      const codePoint = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      for (const place of placements) {
        const error = refusal(() => normalizeTarget('email', place(char)));
        expect(error.code).toBe('validation');
        expect(error.details.field).toBe('target');
        expect(error.message).toContain(codePoint);
        expect(refusal(() => normalizeEmail(place(char))).details.field).toBe('target');
      }
    },
  );

  it('K3: every Cf code point of the Unicode version Node ships is refused in email, phone and URL targets', () => {
    let checked = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const char = String.fromCodePoint(cp);
      if (!/\p{Cf}/u.test(char)) continue;
      checked++;
      for (const [type, raw] of [
        ['email', `an${char}na@example.com`],
        ['phone', `+49151${char}12345678`],
        ['url', `https://example.com/a${char}b`],
      ] as [TargetType, string][]) {
        expect(refusal(() => normalizeTarget(type, raw)).details.field).toBe('target');
      }
    }
    // Unicode 15 lists 170 format characters; fewer would mean the check looked at the wrong category.
    expect(checked).toBeGreaterThan(150);
  });

  it('K3: the same address without the format character still normalizes (only the invisible character is refused)', () => {
    expect(normalizeTarget('email', 'Anna@Example.com')).toBe('anna@example.com');
    expect(normalizeTarget('email', 'anna\u00e9@example.com')).toBe('anna\u00e9@example.com');
  });
});
