import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { signWebhook, verifyWebhookSignature } from '../../src/jobs/webhook-signature.js';

describe('webhook signature', () => {
  const secret = 'whsec_test';
  const body = '{"status":"success","request_id":"r1"}';

  it('is t=<seconds>,v1=<HMAC-SHA256 hex of "<t>.<body>">', () => {
    const header = signWebhook(secret, body, 1_700_000_000.7);
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    assert.equal(header, `t=1700000000,v1=${expected}`);
  });

  it('verifies, and rejects a changed body, another secret or an old timestamp', () => {
    const now = 1_700_000_000;
    const header = signWebhook(secret, body, now);
    assert.equal(verifyWebhookSignature(secret, body, header, { nowSeconds: now + 10 }), true);
    assert.equal(verifyWebhookSignature(secret, body.replace('r1', 'r2'), header, { nowSeconds: now }), false);
    assert.equal(verifyWebhookSignature('whsec_other', body, header, { nowSeconds: now }), false);
    assert.equal(verifyWebhookSignature(secret, body, header, { nowSeconds: now + 3600 }), false);
    assert.equal(verifyWebhookSignature(secret, body, 'garbage', { nowSeconds: now }), false);
  });
});
