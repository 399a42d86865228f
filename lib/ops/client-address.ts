// Where a request came from (A1: where, in every audit entry; the per-source limits). X-Forwarded-For
// is believed only as far as the hops that appended to it are proxies named in TRUSTED_PROXIES: read
// right to left from the TCP peer, each trusted hop hands over to the address it forwarded for, and the
// first untrusted one is the client. Without TRUSTED_PROXIES the header is ignored, so a client cannot
// choose its own address by sending one.
import { BlockList, isIP } from 'node:net';

export type ProxyList = BlockList;

/** Parses TRUSTED_PROXIES: addresses and CIDR ranges, IPv4 or IPv6, separated by commas. */
export function parseTrustedProxies(value: string | undefined): ProxyList {
  const list = new BlockList();
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const [address = '', bits] = entry.split('/');
    const family = isIP(address);
    if (!family) throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else {
      const prefix = Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32))
        throw new Error(`TRUSTED_PROXIES: "${entry}" has a bad prefix length`);
      list.addSubnet(address, prefix, type);
    }
  }
  return list;
}

/** IPv4 peers of a dual-stack socket arrive as ::ffff:a.b.c.d. */
function plain(address: string): string {
  const a = address.trim().replace(/^\[|\]$/g, '');
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(a) ? a.slice(7) : a;
}

function trusted(list: ProxyList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The client's address from the TCP peer and the X-Forwarded-For header. */
export function clientAddress(peer: string, forwardedFor: string | null | undefined, proxies: ProxyList): string {
  let current = plain(peer);
  const hops = (forwardedFor ?? '')
    .split(',')
    .map(plain)
    .filter((h) => h !== '');
  while (hops.length && trusted(proxies, current)) {
    const next = hops.pop()!;
    if (!isIP(next)) break; // garbage in the header: stop at the last hop we could vouch for
    current = next;
  }
  return current;
}
