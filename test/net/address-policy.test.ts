import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAddressPolicy, ForbiddenAddressError } from '../../src/net/address-policy.js';

const refused = [
  '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '169.254.169.254', '100.64.0.1',
  '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.51.100.7', '203.0.113.9', '240.0.0.1',
  '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '2001:db8::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254',
  // IPv4-compatible (::/96) and NAT64 (64:ff9b::/96, 64:ff9b:1::/48), whatever IPv4 address they carry.
  '::7f00:1', '::a00:1', '::808:808', '::2', '64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b:1::7f00:1', '64:ff9b:1:ffff::1',
];
const publicAddresses = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

/** A lookup call as net.connect makes it, as a promise. */
function lookupAll(policy: ReturnType<typeof createAddressPolicy>, host: string): Promise<{ address: string; family: number }[]> {
  return new Promise((resolve, reject) =>
    policy.lookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses as unknown as { address: string; family: number }[]))),
  );
}

describe('address policy', () => {
  it('refuses loopback, private, link-local, CGNAT, special and IPv4-mapped ranges', () => {
    const policy = createAddressPolicy([]);
    for (const a of refused) assert.notEqual(policy.refusal(a, a), null, `${a} should be refused`);
    for (const a of publicAddresses) assert.equal(policy.refusal(a, a), null, `${a} should be allowed`);
  });

  it('allows what the config names: an IP, a CIDR (also as IPv4-mapped) or a host name', () => {
    const policy = createAddressPolicy(['127.0.0.1', '10.0.0.0/8', 'media.internal', '[::1]']);
    assert.equal(policy.refusal('127.0.0.1', '127.0.0.1'), null);
    assert.equal(policy.refusal('x', '::ffff:127.0.0.1'), null);
    assert.equal(policy.refusal('x', '10.200.3.4'), null);
    assert.equal(policy.refusal('x', '::1'), null);
    assert.equal(policy.refusal('media.internal', '192.168.7.7'), null);
    assert.equal(policy.refusal('MEDIA.internal.', '192.168.7.7'), null);
    assert.equal(policy.refusal('other.internal', '192.168.7.7'), 'private');
    assert.equal(policy.refusal('127.0.0.2', '127.0.0.2'), 'loopback');
  });

  it('checks IP literals before connecting', () => {
    const policy = createAddressPolicy([]);
    assert.throws(() => policy.assertHostAllowed('[::1]'), ForbiddenAddressError);
    assert.throws(() => policy.assertHostAllowed('169.254.169.254'), ForbiddenAddressError);
    // URL.hostname writes ::127.0.0.1 as [::7f00:1].
    assert.throws(() => policy.assertHostAllowed(new URL('http://[::127.0.0.1]/').hostname), ForbiddenAddressError);
    assert.throws(() => policy.assertHostAllowed(new URL('http://[64:ff9b::127.0.0.1]/').hostname), ForbiddenAddressError);
    assert.doesNotThrow(() => policy.assertHostAllowed('8.8.8.8'));
    assert.doesNotThrow(() => policy.assertHostAllowed('example.com'), 'names are checked at lookup time');
  });

  it('lookup drops refused addresses and fails when none is left', async () => {
    const answers: Record<string, { address: string; family: number }[]> = {
      'mixed.test': [{ address: '10.0.0.5', family: 4 }, { address: '93.184.216.34', family: 4 }, { address: '::1', family: 6 }],
      'private.test': [{ address: '169.254.169.254', family: 4 }],
    };
    const policy = createAddressPolicy([], { resolve: async (h) => answers[h] ?? [] });
    assert.deepEqual(await lookupAll(policy, 'mixed.test'), [{ address: '93.184.216.34', family: 4 }]);
    await assert.rejects(lookupAll(policy, 'private.test'), (err: unknown) => err instanceof ForbiddenAddressError && /169\.254\.169\.254/.test(err.message));
    const single = await new Promise<string>((resolve, reject) =>
      policy.lookup('mixed.test', {}, (err, address) => (err ? reject(err) : resolve(address as string))),
    );
    assert.equal(single, '93.184.216.34');
  });

  it('lookup resolves real names through DNS: localhost is refused unless allowed', async () => {
    await assert.rejects(lookupAll(createAddressPolicy([]), 'localhost'), ForbiddenAddressError);
    const allowed = await lookupAll(createAddressPolicy(['localhost']), 'localhost');
    assert.ok(allowed.length > 0);
  });
});
