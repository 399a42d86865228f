// Where the sign-in page sends a person once they are signed in: a path of this console, never
// another site. A value that only looks like a path is refused too: `//host/x` and `/\host/x` are
// read by browsers as another host, and tabs or newlines inside are dropped before that reading.
const PROBE_ORIGIN = 'http://console.invalid';

/** The path (with query and fragment) to go to after signing in, or `fallback` for anything else. */
export function safeCallbackUrl(value: string | undefined | null, fallback = '/runs'): string {
  if (!value || !value.startsWith('/')) return fallback;
  let url: URL;
  try {
    url = new URL(value, PROBE_ORIGIN);
  } catch {
    return fallback;
  }
  if (url.origin !== PROBE_ORIGIN || value.startsWith('//') || value.includes('\\')) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
