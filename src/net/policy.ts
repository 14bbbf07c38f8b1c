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
  const entries = (typeof text === 'string' ? text.split(',') : text ?? []).map((e) => e.trim()).filter((e) => e.length > 0);
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
 * (100.64/10), reserved and documentation ranges, and IPv6 forms that embed
 * an IPv4 address (mapped, NAT64, 6to4, Teredo) are refused. IPv4-mapped
 * IPv6 is judged as the IPv4 address it carries.
 */
export function addressRefusal(address: string, allow: AllowList = EMPTY_ALLOW_LIST): string | null {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const addr = ipaddr.process(address);
  if (inAllowedRange(addr, allow)) return null;
  const range = addr.range();
  return range === 'unicast' ? null : `${addr.toString()} is a ${range} address`;
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
