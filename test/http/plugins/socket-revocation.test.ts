/**
 * Revoking a key closes the sockets opened with it (1008) within a third of the socket-slot
 * lease: open sockets' keys are checked against the database, so a key revoked by the CLI or on
 * another node counts the same. Sockets of the account's other keys stay open.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KEY_ROLES } from '../../../src/accounts/api-keys.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { connect, wsUrl } from '../../helpers/websocket.js';

describe('revoked keys and open sockets', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ engines: true, config: { realtime: { socketLeaseMs: 600 }, logLevel: 'warn' } });
  });
  after(() => s?.close());

  it('a revoked key loses its open sockets within the lease; another key of the account keeps its own', async () => {
    const keys = s.server.storage.apiKeys;
    const doomed = await keys.create({ name: 'doomed', role: KEY_ROLES.user });
    const sibling = await keys.create({ name: 'sibling', accountId: doomed.account.id, role: KEY_ROLES.user });
    const url = wsUrl(s.url, '/api/v1/tts-v2/get_speech/stream');
    const [a, b, kept] = await Promise.all([
      connect(url, { authorization: `Bearer ${doomed.key}` }),
      connect(`${url}?token=${doomed.key}`, {}),
      connect(url, { authorization: `Bearer ${sibling.key}` }),
    ]);
    const revokedAt = Date.now();
    assert.equal(await keys.revoke(doomed.row.id), true);
    for (const socket of [a, b]) {
      await socket.until(() => false, 3_000).catch(() => undefined);
      assert.deepEqual(socket.closed, { code: 1008, reason: 'API key revoked' });
    }
    assert.ok(Date.now() - revokedAt < 3_000);
    assert.equal(kept.closed, undefined, 'the sibling key still works');
    kept.send({ request_id: 'x', text: 'Still here.', voice_id: 'espeak-en-us-female' });
    await kept.until((all) => all.some((m) => m.request_id === 'x' && m.status === 'complete'));
    kept.close();
  });
});
