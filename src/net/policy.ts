import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * What the outbound HTTP client may reach. Webhook URLs (and RCS media URLs)
 * come from customers: without these rules a customer could make the gateway
 * call the operator's own network (databases, admin panels, the cloud
 * metadata service at 169.254.169.254) and read or trigger things there.
 */

export type SafeFetchErrorCode = 'URL' | 'SCHEME' | 'PORT' | 'ADDRESS' | 'REDIRECTS' | 'TIMEOUT' | 'TOO_LARGE' | 'NETWORK';

/** A refused or failed outbound request; `code` says which rule or failure. */
export class SafeFetchError extends Error {
  constructor(
    readonly code: SafeFetchErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SafeFetchError';
  }
}

/** Ports any host may use; other ports only for allow-listed hosts. */
export const DEFAULT_PORTS: ReadonlySet<number> = new Set([80, 443, 8080, 8443]);

/**
 * The operator's exceptions (`GATEWAY_FETCH_ALLOW`): host names (matched
 * exactly, case-insensitive) and addresses or CIDR ranges. An allowed host
 * or address may use any port and resolve to any address.
 */
export interface AllowList {
  hosts: ReadonlySet<string>;
  ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

export const EMPTY_ALLOW_LIST: AllowList = { hosts: new Set(), ranges: [] };

/** Parses `GATEWAY_FETCH_ALLOW`: comma-separated host names, addresses or CIDRs. Throws on a malformed CIDR. */
export function parseAllowList(text: string | undefined | readonly string[]): AllowList {
  const entries = (typeof text === 'string' ? text.split(',') : (text ?? [])).map((e) => e.trim()).filter((e) => e.length > 0);
  const hosts = new Set<string>();
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const entry of entries) {
    const bare = entry.replace(/^\[(.*)\]$/, '$1');
    if (bare.includes('/')) {
      if (!ipaddr.isValidCIDR(bare)) throw new Error(`GATEWAY_FETCH_ALLOW: "${entry}" is not a CIDR range`);
      const [addr, bits] = ipaddr.parseCIDR(bare);
      ranges.push([addr, bits]);
    } else if (isIP(bare)) {
      const addr = ipaddr.process(bare);
      ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else {
      hosts.add(bare.toLowerCase());
    }
  }
  return { hosts, ranges };
}

function inAllowedRange(addr: ipaddr.IPv4 | ipaddr.IPv6, allow: AllowList): boolean {
  return allow.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}

/**
 * Why an address must not be connected to, or null when it may. Only
 * ordinary public unicast passes: loopback, private (RFC 1918, fc00::/7),
 * link-local (169.254/16, fe80::/10), multicast, unspecified, CGNAT
 * (100.64/10), reserved and documentation ranges are refused, and so is any
 * IPv6 address outside the global unicast block 2000::/3. An IPv6 address
 * that carries an IPv4 address (see embeddedIPv4) is judged by the IPv4
 * address(es) it carries: `[::127.0.0.1]`, `[::ffff:7f00:1]` or
 * `[2002:7f00:1::]` reach loopback through a translator, so they are refused
 * like 127.0.0.1; the same forms around a public address pass.
 */
export function addressRefusal(address: string, allow: AllowList = EMPTY_ALLOW_LIST): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const addr = ipaddr.process(address);
  if (inAllowedRange(addr, allow)) return null;
  if (addr.kind() === 'ipv4') {
    const range = addr.range();
    return range === 'unicast' ? null : `${addr.toString()} is ${article(range)} ${range} address`;
  }
  const v6 = addr as ipaddr.IPv6;
  const carried = embeddedIPv4(v6);
  if (carried) {
    for (const { v4, form } of carried) {
      const range = v4.range();
      if (range !== 'unicast') return `${v6.toString()} is ${form} ${v4.toString()}, ${article(range)} ${range} address`;
    }
    return null;
  }
  const range = v6.range();
  if (range !== 'unicast') return `${v6.toString()} is ${article(range)} ${range} address`;
  // Global unicast is 2000::/3; the rest of the space is reserved or unassigned.
  return v6.match(GLOBAL_UNICAST, 3) ? null : `${v6.toString()} is outside the global unicast range 2000::/3`;
}

const GLOBAL_UNICAST = ipaddr.IPv6.parse('2000::');
const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a');

/** One IPv4 address an IPv6 address carries, and how it carries it. */
export interface EmbeddedIPv4 {
  v4: ipaddr.IPv4;
  form: string;
}

const v4Of = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
const zero = (parts: number[], from: number, to: number) => parts.slice(from, to).every((p) => p === 0);

/**
 * The IPv4 addresses an IPv6 address embeds, or null when it embeds none:
 * - IPv4-compatible `::a.b.c.d` (not `::` and `::1`, which are themselves);
 * - IPv4-mapped `::ffff:a.b.c.d` and IPv4-translated `::ffff:0:a.b.c.d`;
 * - NAT64 well-known prefix `64:ff9b::/96` (the last 32 bits);
 * - NAT64 local-use prefix `64:ff9b:1::/48`: the operator picks a /48, /56,
 *   /64 or /96 prefix inside it, each of which puts the IPv4 address at
 *   other bits, and the address does not say which: every reading that
 *   fits (non-zero, followed by zero bits) is judged;
 * - 6to4 `2002:AABB:CCDD::/48` (bits 16-47);
 * - Teredo `2001:0::/32`: the server (bits 32-63) and the client (the last
 *   32 bits inverted); both must be public.
 */
export function embeddedIPv4(addr: ipaddr.IPv6): EmbeddedIPv4[] | null {
  const p = addr.parts as [number, number, number, number, number, number, number, number];
  if (zero(p, 0, 6)) return p[6] === 0 && p[7] <= 1 ? null : [{ v4: v4Of(p[6], p[7]), form: 'an IPv4-compatible form of' }];
  if (zero(p, 0, 5) && p[5] === 0xffff) return [{ v4: v4Of(p[6], p[7]), form: 'an IPv4-mapped form of' }];
  if (zero(p, 0, 4) && p[4] === 0xffff && p[5] === 0) return [{ v4: v4Of(p[6], p[7]), form: 'an IPv4-translated form of' }];
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(p, 2, 6)) return [{ v4: v4Of(p[6], p[7]), form: 'a NAT64 (64:ff9b::/96) form of' }];
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) {
    const form = 'a NAT64 local-use (64:ff9b:1::/48) form of';
    // Each prefix length puts the address elsewhere, followed by zero bits.
    const readings = [
      { v4: new ipaddr.IPv4([p[3] >> 8, p[3] & 0xff, p[4] & 0xff, p[5] >> 8]), rest: (p[5] & 0xff) === 0 && zero(p, 6, 8) }, // /48: bits 48-63, 72-87
      { v4: new ipaddr.IPv4([p[3] & 0xff, p[4] & 0xff, p[5] >> 8, p[5] & 0xff]), rest: zero(p, 6, 8) }, // /56: bits 56-63, 72-95
      { v4: new ipaddr.IPv4([p[4] & 0xff, p[5] >> 8, p[5] & 0xff, p[6] >> 8]), rest: (p[6] & 0xff) === 0 && p[7] === 0 }, // /64: bits 72-103
      { v4: v4Of(p[6], p[7]), rest: true }, // /96: bits 96-127
    ];
    const possible = readings.filter((r) => r.rest && r.v4.octets.some((o) => o !== 0)).map(({ v4 }) => ({ v4, form }));
    // No reading at all (64:ff9b:1::) is judged as 0.0.0.0.
    return possible.length > 0 ? possible : [{ v4: v4Of(0, 0), form }];
  }
  if (p[0] === 0x2002) return [{ v4: v4Of(p[1], p[2]), form: 'a 6to4 form of' }];
  if (p[0] === 0x2001 && p[1] === 0) {
    return [
      { v4: v4Of(p[2], p[3]), form: 'a Teredo address with server' },
      { v4: v4Of(p[6] ^ 0xffff, p[7] ^ 0xffff), form: 'a Teredo address with client' },
    ];
  }
  return null;
}

/** The host of a URL without IPv6 brackets, lower case. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** True when the operator allowed this host (by name, or as an address in an allowed range). */
export function hostAllowed(host: string, allow: AllowList): boolean {
  if (allow.hosts.has(host)) return true;
  return isIP(host) !== 0 && inAllowedRange(ipaddr.process(host), allow);
}

/**
 * The checks that need no DNS: a parseable http(s) URL without credentials,
 * an allowed port, and no literal refused address or `localhost` name.
 * Run when a URL is registered and again before every request and redirect
 * hop; the address a name resolves to is checked when connecting.
 */
export function checkUrl(input: string | URL, allow: AllowList = EMPTY_ALLOW_LIST): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new SafeFetchError('URL', `"${String(input)}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SafeFetchError('SCHEME', `scheme ${url.protocol} is not allowed; use http or https`);
  if (url.username || url.password) throw new SafeFetchError('URL', 'a URL with credentials (user:password@) is not allowed');
  const host = bareHost(url);
  if (!host) throw new SafeFetchError('URL', 'the URL has no host');
  const allowed = hostAllowed(host, allow);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!allowed && !DEFAULT_PORTS.has(port)) throw new SafeFetchError('PORT', `port ${port} is not allowed; use 80, 443, 8080 or 8443`);
  if (allowed) return url;
  if (isIP(host)) {
    const why = addressRefusal(host, allow);
    if (why) throw new SafeFetchError('ADDRESS', `${why}; only public addresses may be called`);
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    throw new SafeFetchError('ADDRESS', `${host} is a loopback name; only public addresses may be called`);
  }
  return url;
}
