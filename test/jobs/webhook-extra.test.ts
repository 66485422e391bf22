import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import { parseWebhookExtra } from '../../src/jobs/webhook-extra.js';

describe('parseWebhookExtra', () => {
  it('parses comma-separated key:value pairs; a value may contain colons', () => {
    assert.deepEqual(parseWebhookExtra('order:42, customer : acme,url:https://x.test/a'), {
      order: '42',
      customer: 'acme',
      url: 'https://x.test/a',
    });
    assert.deepEqual(parseWebhookExtra(''), {});
    assert.deepEqual(parseWebhookExtra('empty:'), { empty: '' });
  });

  it('keeps "__proto__" an ordinary field', () => {
    const extra = parseWebhookExtra('__proto__:x');
    assert.equal(Object.getPrototypeOf(extra), Object.prototype);
    assert.equal(JSON.stringify(extra), '{"__proto__":"x"}');
  });

  it('refuses malformed pairs, repeated keys and keys that collide with result fields', () => {
    for (const [raw, message] of [
      ['novalue', /pair 1/],
      ['a:1,,b:2', /pair 2/],
      [':x', /pair 1/],
      ['a:1,a:2', /given twice/],
      ['transcription:x', /collides/],
      ['ok:1,request_id:2', /collides/],
      ['error:x', /collides/],
      ['speakers:x', /collides/],
    ] as const) {
      assert.throws(() => parseWebhookExtra(raw), (err: unknown) => err instanceof InvalidRequestError && message.test(err.message), raw);
    }
  });
});
