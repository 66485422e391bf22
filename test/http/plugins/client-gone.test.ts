/** request.clientGone: the signal a route hands its use case, fired by a client that leaves, not by one that is answered. */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { useClientGone } from '../../../src/http/plugins/client-gone.js';

describe('request.clientGone', () => {
  it('aborts when the client disconnects mid-request, and stays quiet for a request answered whole', async () => {
    const app = Fastify();
    useClientGone(app);
    const seen: Record<string, boolean> = {};
    let slowStarted: () => void;
    const started = new Promise<void>((resolve) => (slowStarted = resolve));
    let slowAborted: () => void;
    const aborted = new Promise<void>((resolve) => (slowAborted = resolve));
    app.get('/slow', async (request) => {
      const signal = request.clientGone;
      signal.addEventListener('abort', () => {
        seen.slow = true;
        slowAborted();
      });
      slowStarted();
      await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
      return 'late';
    });
    let fastSignal: AbortSignal | undefined;
    app.get('/fast', async (request) => {
      fastSignal = request.clientGone;
      return 'ok';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as { port: number };
      const fast = await fetch(`http://127.0.0.1:${port}/fast`);
      assert.equal(await fast.text(), 'ok');
      const req = httpRequest({ host: '127.0.0.1', port, path: '/slow' });
      req.on('error', () => undefined);
      req.end();
      await started;
      req.destroy();
      await aborted;
      assert.equal(seen.slow, true);
      assert.equal(fastSignal?.aborted, false, 'a response sent whole is not a client that left');
    } finally {
      await app.close();
    }
  });
});
