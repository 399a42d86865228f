// After signing in, the page goes where callbackUrl says: only ever a path of the console.
import { describe, expect, it } from 'vitest';
import { safeCallbackUrl } from '@/lib/auth/callback-url.ts';

describe('safeCallbackUrl', () => {
  it('keeps a console path with its query and fragment', () => {
    expect(safeCallbackUrl('/inbox/open/3f1c?x=1#top')).toBe('/inbox/open/3f1c?x=1#top');
    expect(safeCallbackUrl('/runs')).toBe('/runs');
  });

  it('refuses other sites, however the address is disguised', () => {
    for (const value of [
      '//evil.example/x',
      '/\\evil.example/x',
      '/\t/evil.example/x',
      '/\n/evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      'evil.example',
      '',
      undefined,
      null,
    ]) {
      expect(safeCallbackUrl(value), String(value)).toBe('/runs');
    }
  });
});
