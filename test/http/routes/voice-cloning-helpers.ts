/** What the voice-cloning tests share: a clone's listing once its creation has ended, a sample to clone. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { corpusDir } from '../../helpers/models.js';
import type { TestServer } from '../../helpers/server.js';

/** The corpus path of its longest labelled adult woman's sample (clean read speech, one speaker). */
export function womanSample(): string {
  const entries = readFileSync(`${corpusDir}/manifest.jsonl`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { file: string; kind: string; gender: string | null; age: string | null; duration_s: number });
  const longest = entries.filter((e) => e.kind === 'age_gender' && e.gender === 'female' && Number(e.age) >= 18).sort((a, b) => b.duration_s - a.duration_s)[0];
  assert.ok(longest, 'the corpus has an adult female sample');
  return longest.file;
}

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
