/**
 * The synthesis use case over the real eSpeak NG engine: voice and language checks, dictionaries
 * of the caller only, the output cap, and a whole file at the requested rate.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEspeakNgEngine } from '../../src/engines/server/espeak-ng-tts.js';
import type { TtsEngine } from '../../src/engines/types.js';
import { InvalidRequestError } from '../../src/errors.js';
import type { PronunciationDict } from '../../src/store/pronunciation-dict-repository.js';
import { PronunciationDictCache } from '../../src/synthesis/pronunciation-dict-cache.js';
import { OutputTooLongError, SynthesisService, type SynthesisRequest } from '../../src/synthesis/synthesize.js';
import { VoiceRegistry } from '../../src/synthesis/voice-registry.js';

/** Dictionaries as the repository answers them: by account, with a version per row. */
function dictionaries(rows: Array<PronunciationDict & { accountId: string }>) {
  const own = (accountId: string, ids: string[]) => rows.filter((r) => r.accountId === accountId && ids.includes(r.id));
  return {
    async versions(accountId: string, ids: string[]) {
      return new Map(own(accountId, ids).map((r) => [r.id, r.version]));
    },
    async findMany(accountId: string, ids: string[]) {
      const found = own(accountId, ids);
      return { found, missing: ids.filter((id) => !found.some((r) => r.id === id)) };
    },
  };
}

describe('SynthesisService', () => {
  let engine: TtsEngine;
  let service: SynthesisService;
  const request = (over: Partial<SynthesisRequest> = {}): SynthesisRequest => ({
    accountId: 'acc-1',
    model: 'tts-v2',
    text: 'Hello there.',
    voiceId: 'espeak-en-us-male',
    sampleRate: 16000,
    speed: 1,
    language: 'auto',
    outputFormat: 'wav',
    pronunciationDicts: [],
    ...over,
  });

  before(async () => {
    engine = await createEspeakNgEngine({ workers: 1 });
    const dicts = new PronunciationDictCache(
      dictionaries([
        { accountId: 'acc-1', id: 'dict-1', items: [{ word: 'Parley', pronunciation: 'parlay' }], createdAt: '2025-01-01', updatedAt: '2025-01-01', version: 'v1' },
        { accountId: 'acc-2', id: 'dict-2', items: [{ word: 'x', pronunciation: 'y' }], createdAt: '2025-01-01', updatedAt: '2025-01-01', version: 'v1' },
      ]),
      { maxBytes: 100_000 },
    );
    service = new SynthesisService({ voices: new VoiceRegistry([engine]), dicts, limits: { maxOutputSeconds: 2 } });
  });
  after(() => engine.close());

  it('refuses an unknown voice, a language the voice cannot speak, and another account\'s dictionary', async () => {
    await assert.rejects(service.prepare(request({ voiceId: 'nobody' })), (e: unknown) => e instanceof InvalidRequestError && /voice_id "nobody"/.test(e.message));
    await assert.rejects(service.prepare(request({ language: 'de' })), /cannot be spoken by voice "espeak-en-us-male"/);
    await assert.rejects(service.prepare(request({ pronunciationDicts: ['dict-2'] })), /unknown id\(s\): dict-2/);
    const prepared = await service.prepare(request({ pronunciationDicts: ['dict-1'], text: 'Parley works.' }));
    assert.equal(prepared.language, 'en');
    assert.ok(prepared.sentences.join(' ').includes('parlay'), prepared.sentences.join(' '));
  });

  it('routes a language the voice cannot speak to the voice most like it that can, and names what would speak a language no voice speaks', async () => {
    const routing = { detectAmong: [] };
    const male = await service.prepare(request({ language: 'de', text: 'Guten Tag.', routing }));
    assert.deepEqual([male.voice.id, male.language], ['espeak-de-male', 'de']);
    const female = await service.prepare(request({ voiceId: 'espeak-en-gb-female', language: 'pt', text: 'Bom dia.', routing }));
    assert.deepEqual([female.voice.id, female.language], ['espeak-pt-female', 'pt']);
    // A voice that speaks the language keeps it.
    assert.equal((await service.prepare(request({ language: 'en', routing }))).voice.id, 'espeak-en-us-male');
    // "auto" reads the text's language among the route's, and routes it too.
    const auto = await service.prepare(request({ text: 'नमस्ते, आप कैसे हैं?', routing: { detectAmong: ['en', 'hi'] } }));
    assert.deepEqual([auto.voice.id, auto.language], ['espeak-hi-male', 'hi']);
    await assert.rejects(
      service.prepare(request({ language: 'xx', routing })),
      (e: unknown) => e instanceof InvalidRequestError && e.message === 'language "xx" cannot be spoken: no installed voice of tts-v2 speaks it; an eSpeak NG build with a "xx" voice would',
    );
  });

  it('makes a WAV file at the requested rate whose duration matches its samples', async () => {
    const file = await service.wholeFile(await service.prepare(request()), { wavHeader: true }, new AbortController().signal);
    assert.equal(file.sampleRate, 16000);
    assert.equal(Buffer.from(file.bytes.subarray(0, 4)).toString('ascii'), 'RIFF');
    const samples = (file.bytes.length - 44) / 2;
    assert.ok(Math.abs(file.durationSeconds - samples / 16000) < 1e-9);
    assert.ok(file.durationSeconds > 0.3 && file.durationSeconds < 2, `${file.durationSeconds} s`);
  });

  it('stops with OutputTooLongError before passing the output cap', async () => {
    const long = request({ text: 'This sentence is long enough to take a while to say. '.repeat(6) });
    await assert.rejects(service.wholeFile(await service.prepare(long), { wavHeader: true }, new AbortController().signal), OutputTooLongError);
  });
});
