import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses the prober may connect to. Only public unicast is allowed: ipaddr.js names
 * every special-purpose range (private, loopback, linkLocal, carrierGradeNat, multicast, reserved,
 * unspecified, broadcast, uniqueLocal, 6to4, teredo, …) and anything it does not call `unicast`
 * is refused. IPv6 forms that merely carry an IPv4 address are judged by the address they carry.
 */

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface AddressPolicy {
  /** Lifts every check (local fleets and tests only). */
  allowPrivateNetworks: boolean;
  /** Ranges exempted from the block, e.g. an operator's own internal registry. Empty by default. */
  allowedCidrs: readonly Cidr[];
}

export function parseCidrs(cidrs: readonly string[]): Cidr[] {
  return cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
}

function inAllowedCidr(ip: ipaddr.IPv4 | ipaddr.IPv6, allowed: readonly Cidr[]): boolean {
  return allowed.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

/** 64:ff9b::/96 is the well-known NAT64 prefix; DNS64 resolvers put every IPv4-only host behind it. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/** The IPv4 address an IPv6 address stands for when it is only a wrapper around one. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  if (ip.match(NAT64_WELL_KNOWN)) {
    const bytes = ip.toByteArray().slice(12);
    return new ipaddr.IPv4(bytes);
  }
  return null;
}

/** True for ::/96 (deprecated "IPv4-compatible" addresses, ::127.0.0.1 and friends). */
function isIPv4Compatible(ip: ipaddr.IPv6): boolean {
  return ip.parts.slice(0, 6).every((part) => part === 0);
}

/**
 * Why `address` must not be connected to, or null when it may. `address` is an IP literal
 * (v4 dotted, or v6 without brackets, zone index allowed).
 */
export function blockedAddressReason(address: string, policy: AddressPolicy): string | null {
  if (policy.allowPrivateNetworks) return null;
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  const ip = ipaddr.parse(address);
  if (inAllowedCidr(ip, policy.allowedCidrs)) return null;
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    const v4 = embeddedIPv4(v6);
    if (v4) {
      if (inAllowedCidr(v4, policy.allowedCidrs)) return null;
      const range = v4.range();
      return range === 'unicast' ? null : `${address} carries ${v4.toString()} (${range})`;
    }
    if (isIPv4Compatible(v6) && v6.range() === 'unicast') return `${address} is an IPv4-compatible address`;
  }
  const range = ip.range();
  return range === 'unicast' ? null : `${address} is ${range}`;
}
