/**
 * Which network addresses Parley may reach on a caller's behalf (URL input, webhooks): public
 * unicast only, unless config.allowedPrivateHosts names the host, the IP or a CIDR holding it.
 * The check runs inside the socket's DNS lookup, so the address that is
 * checked is the address that is connected to: no window for DNS rebinding between a check and
 * a second resolution.
 */
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

/**
 * What a client is told about a refused address. What a name resolved to, and which range refused
 * it, map the server's network for whoever asks: that detail (the error's message) goes to the
 * operator's log only.
 */
export const REFUSED_ADDRESS_SENTENCE = 'it leads to a private, loopback or reserved network address';

/** Thrown (inside the lookup, so it surfaces as the `cause` of a connect error) for a refused address. */
export class ForbiddenAddressError extends Error {
  readonly code = 'PARLEY_FORBIDDEN_ADDRESS';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(host === address ? `address ${address} is not allowed (${range})` : `host ${host} resolves to ${address}, which is not allowed (${range})`);
  }
}

type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface AddressPolicy {
  /** The ipaddr.js range name when `address` is refused for `host`, else null (allowed). */
  refusal(host: string, address: string): string | null;
  /** Throws ForbiddenAddressError when `hostname` is an IP literal that is refused; names are checked at connect time. */
  assertHostAllowed(hostname: string): void;
  /** A `lookup` for net/tls connect: resolves, drops refused addresses, fails when none is left. */
  lookup: LookupFunction;
  /** An undici Agent whose every connection goes through `lookup`. The caller closes it. */
  createAgent(options: { connectTimeoutMs: number }): Agent;
}

interface AllowRule {
  host?: string;
  cidr?: [ipaddr.IPv4 | ipaddr.IPv6, number];
}

/** Strip the brackets URL.hostname keeps around an IPv6 literal. */
function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries. */
function normalise(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/**
 * Ranges ipaddr.js calls "unicast" that lead to an IPv4 address all the same: IPv4-compatible
 * IPv6 (::/96, deprecated by RFC 4291; `http://[::7f00:1]/` is 127.0.0.1 on some stacks) and the
 * NAT64 prefixes (64:ff9b::/96 of RFC 6052, 64:ff9b:1::/48 of RFC 8215) a translator turns into
 * whatever IPv4 address they carry.
 */
const embeddedIpv4Ranges: [string, [ipaddr.IPv6, number]][] = [
  ['ipv4Compatible', ipaddr.IPv6.parseCIDR('::/96')],
  ['nat64', ipaddr.IPv6.parseCIDR('64:ff9b::/96')],
  ['nat64', ipaddr.IPv6.parseCIDR('64:ff9b:1::/48')],
];

/** The ipaddr.js range of an address, with the ranges above named as refused ones. */
function rangeOf(ip: ipaddr.IPv4 | ipaddr.IPv6): string {
  const range = ip.range();
  if (range !== 'unicast' || ip.kind() !== 'ipv6') return range;
  return embeddedIpv4Ranges.find(([, cidr]) => (ip as ipaddr.IPv6).match(cidr))?.[0] ?? range;
}

function parseRules(allowed: readonly string[]): AllowRule[] {
  return allowed.map((entry) => {
    const e = bareHost(entry.trim().toLowerCase());
    if (e.includes('/') && ipaddr.isValidCIDR(e)) {
      const [ip, bits] = ipaddr.parseCIDR(e);
      return { cidr: [normalise(ip.toString()), ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? bits - 96 : bits] };
    }
    if (ipaddr.isValid(e)) {
      const ip = normalise(e);
      return { cidr: [ip, ip.kind() === 'ipv4' ? 32 : 128] };
    }
    return { host: e.replace(/\.$/, '') };
  });
}

export function createAddressPolicy(allowedPrivateHosts: readonly string[], options: { resolve?: Resolve } = {}): AddressPolicy {
  const rules = parseRules(allowedPrivateHosts);
  const resolve: Resolve = options.resolve ?? ((hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true }));

  function hostAllowed(host: string): boolean {
    const h = bareHost(host).toLowerCase().replace(/\.$/, '');
    return rules.some((r) => r.host === h);
  }

  function refusal(host: string, address: string): string | null {
    if (!ipaddr.isValid(address)) return 'not an IP address';
    const ip = normalise(address);
    // Only ordinary public unicast passes; every special range of ipaddr.js (loopback, private,
    // uniqueLocal, linkLocal, carrierGradeNat, reserved, 6to4, teredo, rfc6052 ...) is refused,
    // and so are IPv4-compatible and NAT64 addresses.
    const range = rangeOf(ip);
    if (range === 'unicast') return null;
    if (hostAllowed(host)) return null;
    for (const r of rules) if (r.cidr && r.cidr[0].kind() === ip.kind() && ip.match(r.cidr)) return null;
    return range;
  }

  function assertHostAllowed(hostname: string): void {
    const h = bareHost(hostname);
    if (net.isIP(h) === 0) return;
    const range = refusal(h, h);
    if (range) throw new ForbiddenAddressError(h, h, range);
  }

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    const cb = callback as (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
    resolve(hostname).then(
      (addresses) => {
        const wanted = lookupOptions.family ? addresses.filter((a) => a.family === lookupOptions.family) : addresses;
        const refused: ForbiddenAddressError[] = [];
        const permitted = wanted.filter((a) => {
          const range = refusal(hostname, a.address);
          if (range) refused.push(new ForbiddenAddressError(hostname, a.address, range));
          return !range;
        });
        if (permitted.length === 0) {
          const err: NodeJS.ErrnoException =
            refused[0] ?? Object.assign(new Error(`host ${hostname} has no address`), { code: 'ENOTFOUND' });
          return cb(err, lookupOptions.all ? [] : '');
        }
        if (lookupOptions.all) return cb(null, permitted);
        return cb(null, permitted[0]!.address, permitted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => cb(err, lookupOptions.all ? [] : ''),
    );
  };

  return {
    refusal,
    assertHostAllowed,
    lookup,
    createAgent: ({ connectTimeoutMs }) => new Agent({ connect: { lookup, timeout: connectTimeoutMs }, connections: 16 }),
  };
}

/**
 * A test for "is this address in the list" (IPs and CIDRs, IPv4-mapped IPv6 judged as IPv4): the
 * trusted proxies, for instance.
 */
export function createAddressMatcher(list: readonly string[]): (address: string | undefined) => boolean {
  const ranges = parseRules(list).flatMap((r) => (r.cidr ? [r.cidr] : []));
  if (ranges.length === 0) return () => false;
  return (address) => {
    if (!address || !ipaddr.isValid(address)) return false;
    const ip = normalise(address);
    return ranges.some((r) => r[0].kind() === ip.kind() && ip.match(r));
  };
}

/** Walk an error's `cause` chain for the policy's refusal (undici wraps connect errors). */
export function findForbiddenAddress(err: unknown): ForbiddenAddressError | null {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ForbiddenAddressError) return e;
  }
  return null;
}
