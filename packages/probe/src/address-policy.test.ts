import { describe, expect, it } from 'vitest';
import { type AddressPolicy, blockedAddressReason, parseCidrs } from './address-policy.ts';

const strict: AddressPolicy = { allowPrivateNetworks: false, allowedCidrs: [] };

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.7', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['2002:7f00:1::', '6to4'],
    ['2001:0:4136:e378::1', 'teredo'],
    ['::7f00:1', 'IPv4-compatible'],
    ['2001:db8::1', 'reserved'],
  ])('refuses %s (%s)', (address, why) => {
    expect(blockedAddressReason(address, strict)).toContain(why);
  });

  it.each([
    '93.184.216.34',
    '1.1.1.1',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:93.184.216.34',
    '64:ff9b::5db8:d822', // NAT64 of 93.184.216.34, as DNS64 hands out on IPv6-only hosts
  ])('allows public %s', (address) => {
    expect(blockedAddressReason(address, strict)).toBeNull();
  });

  it('refuses what is not an IP address', () => {
    expect(blockedAddressReason('example.com', strict)).toContain('not an IP address');
  });

  it('lets allowPrivateNetworks lift every check', () => {
    expect(blockedAddressReason('127.0.0.1', { allowPrivateNetworks: true, allowedCidrs: [] })).toBeNull();
  });

  it('exempts only the allowed CIDRs, in both IPv4 and mapped form', () => {
    const policy: AddressPolicy = { allowPrivateNetworks: false, allowedCidrs: parseCidrs(['10.20.0.0/16']) };
    expect(blockedAddressReason('10.20.3.4', policy)).toBeNull();
    expect(blockedAddressReason('::ffff:10.20.3.4', policy)).toBeNull();
    expect(blockedAddressReason('10.21.0.1', policy)).toContain('private');
  });
});
