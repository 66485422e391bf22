/** What the voice-cloning tests share: a clone's listing once its creation has ended. */
import assert from 'node:assert/strict';
import type { TestServer } from '../../helpers/server.js';

/**
 * The clone as get_cloned_voices lists it once its status is no longer `processing`, polled the
 * way a client would (every 100 ms, at most `timeoutMs`).
 */
export async function settledClone(s: Pick<TestServer, 'url' | 'key'>, voiceId: string, key = s.key, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${s.url}/api/v1/tts-large/get_cloned_voices`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    const voice = ((await res.json()) as { voices: any[] }).voices.find((v) => v.voiceId === voiceId);
    assert.ok(voice, `${voiceId} is listed`);
    if (voice.status !== 'processing') return voice;
    assert.ok(Date.now() < deadline, `${voiceId} still processing after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
