/**
 * Resampling and encoding in output worker threads: the same bytes as on the event loop for every
 * format, as a whole file, a stream and plain PCM; a request in pieces is one continuous stream;
 * and the output cap still stops a synthesis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEncoder } from '../../src/audio/encode.js';
import type { OutputFormat } from '../../src/audio/pcm.js';
import { encodeWith } from '../../src/audio/stream-encode.js';
import { timeStretch } from '../../src/audio/time-stretch.js';
import type { TtsEngine, Voice } from '../../src/engines/types.js';
import { OutputWorkers } from '../../src/synthesis/output-workers.js';
import { SynthesisScheduler } from '../../src/synthesis/scheduler.js';
import { PronunciationDictCache } from '../../src/synthesis/pronunciation-dict-cache.js';
import { OutputTooLongError, SynthesisService, type SynthesisRequest } from '../../src/synthesis/synthesize.js';
import { VoiceRegistry } from '../../src/synthesis/voice-registry.js';
import { WordTimer } from '../../src/synthesis/word-timing.js';

/**
 * A deterministic engine (eSpeak's output length varies by a few samples from run to run): per
 * sentence a short first piece, then longer ones, as eSpeak hands them over, of a tone whose
 * pitch follows the text.
 */
function toneEngine(): TtsEngine {
  const voice: Voice = { id: 'tone-en', displayName: 'Tone', languages: ['en'], accent: 'us', gender: 'female', sampleRate: 22050, engine: 'tone', models: ['tts-v2'] };
  return {
    name: 'tone',
    listVoices: () => [voice],
    async *synthesize(_voice, text) {
      let phase = 0;
      for (const length of [2206, 22050, text.length * 150]) {
        const piece = new Float32Array(length);
        for (let i = 0; i < length; i++) piece[i] = 0.5 * Math.sin((phase += (2 * Math.PI * (200 + text.length * 5 + (i % 700))) / 22050));
        yield piece;
      }
    },
    close: async () => {},
  };
}

const noDicts = { versions: async () => new Map(), findMany: async (_: string, ids: string[]) => ({ found: [], missing: ids }) };

async function* feed<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('synthesis output workers', () => {
  let engine: TtsEngine;
  let workers: OutputWorkers;
  let inThread: SynthesisService;
  let beside: SynthesisService;
  const signal = new AbortController().signal;
  const request = (over: Partial<SynthesisRequest> = {}): SynthesisRequest => ({
    accountId: 'acc-1',
    model: 'tts-v2',
    text: 'The morning train left the station. Outside, the fields were white.',
    voiceId: 'tone-en',
    sampleRate: 24000,
    speed: 1,
    language: 'auto',
    outputFormat: 'wav',
    pronunciationDicts: [],
    ...over,
  });

  before(async () => {
    engine = toneEngine();
    workers = new OutputWorkers(2);
    const deps = { voices: new VoiceRegistry([engine]), dicts: new PronunciationDictCache(noDicts, { maxBytes: 100_000 }), limits: { maxOutputSeconds: 10 } };
    inThread = new SynthesisService(deps);
    beside = new SynthesisService({ ...deps, output: workers });
  });
  after(async () => {
    await beside.close();
    await engine.close();
  });

  for (const format of ['pcm', 'wav', 'mp3', 'mulaw', 'alaw'] as OutputFormat[]) {
    it(`gives the event loop's bytes for ${format}: whole file and stream`, async () => {
      const r = request({ outputFormat: format });
      for (const wavHeader of [true, false]) {
        const here = await inThread.wholeFile(await inThread.prepare(r), { wavHeader }, signal);
        const there = await beside.wholeFile(await beside.prepare(r), { wavHeader }, signal);
        assert.deepEqual([there.contentType, there.sampleRate, there.durationSeconds], [here.contentType, here.sampleRate, here.durationSeconds]);
        assert.ok(Buffer.from(there.bytes).equals(Buffer.from(here.bytes)), `${format} file (header ${wavHeader}) differs`);
      }
      const streamHere = Buffer.concat(await collect(inThread.encodedStream(await inThread.prepare(r), signal)));
      const streamThere = Buffer.concat(await collect(beside.encodedStream(await beside.prepare(r), signal)));
      assert.ok(streamHere.length > 1000 && streamThere.equals(streamHere), `${format} stream differs`);
    });
  }

  it("streams OpenAI's FLAC and Ogg Opus from the workers as on the event loop", async () => {
    const r = request();
    const flacHere = Buffer.concat(await collect(inThread.encodedStream(await inThread.prepare(r), signal, undefined, 'flac')));
    const flacThere = Buffer.concat(await collect(beside.encodedStream(await beside.prepare(r), signal, undefined, 'flac')));
    assert.equal(flacThere.subarray(0, 4).toString('latin1'), 'fLaC');
    assert.ok(flacThere.equals(flacHere));
    // Each Ogg stream has a random serial number: the same pages, not the same bytes.
    const opusHere = Buffer.concat(await collect(inThread.encodedStream(await inThread.prepare(r), signal, undefined, 'opus')));
    const opusThere = Buffer.concat(await collect(beside.encodedStream(await beside.prepare(r), signal, undefined, 'opus')));
    assert.equal(opusThere.subarray(0, 4).toString('latin1'), 'OggS');
    assert.equal(opusThere.length, opusHere.length);
  });

  it('gives the same PCM, and a request in pieces as one stream with one header', async () => {
    const r = request({ sampleRate: 16000 });
    const here = await collect(inThread.pcm(await inThread.prepare(r), signal));
    const there = await collect(beside.pcm(await beside.prepare(r), signal));
    const joined = (parts: Float32Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
    assert.ok(joined(there).equals(joined(here)));

    const resolved = await beside.resolve(r);
    const pieces = ['The morning train left.', 'Outside, the fields were white.'].map((text) => beside.prepareText(resolved, text));
    const bytes = Buffer.concat(await collect(beside.encodedPieces(r, pieces, signal)));
    assert.equal(bytes.subarray(0, 4).toString('ascii'), 'RIFF');
    assert.equal(bytes.indexOf('RIFF', 4), -1);
  });

  it('times the words of a request in parts from loudness measured in the workers, as from the samples on the event loop', async () => {
    const r = request({ outputFormat: 'mp3' });
    const texts = ['The morning train left, slowly.', 'Outside, the fields were white.'];
    const parts = await collect(beside.spokenParts(await beside.resolve(r), feed(texts), signal, { samples: 0 }, { wordTimestamps: true }));
    const words = parts.flatMap((p) => ('words' in p ? [p.words] : []));
    // Each part's words come after its audio, and the bytes are those of the same parts without timing.
    assert.deepEqual(parts.map((p) => ('words' in p ? 'words' : 'bytes')).filter((k, i, all) => k !== all[i - 1]), ['bytes', 'words', 'bytes', 'words', 'bytes']);
    const untimed = await collect(beside.spokenParts(await beside.resolve(r), feed(texts), signal, { samples: 0 }, { wordTimestamps: false }));
    const bytesOf = (ps: typeof parts) => Buffer.concat(ps.flatMap((p) => ('bytes' in p ? [p.bytes] : [])));
    assert.ok(bytesOf(parts).equals(bytesOf(untimed)));
    // The same words from the samples themselves, measured here.
    let samplesBefore = 0;
    for (const [i, text] of texts.entries()) {
      const prepared = inThread.prepareText(await inThread.resolve(r), text);
      const timer = new WordTimer(prepared.sentences.join(' '), samplesBefore / r.sampleRate, r.sampleRate);
      for (const samples of await collect(inThread.pcm(prepared, signal))) {
        timer.observe(samples);
        samplesBefore += samples.length;
      }
      assert.ok(words[i]!.length >= 5);
      assert.deepEqual(words[i], timer.words());
    }
  });

  it('changes the tempo in the workers as the time stretcher does on the event loop, the tail included', async () => {
    for (const tempo of [0.5, 2]) {
      const r = request({ outputFormat: 'pcm' });
      const stats = { samples: 0 };
      const there = Buffer.concat(await collect(beside.encodedStream(await beside.prepare(r), signal, stats, 'pcm', tempo)));
      const stretched = await collect(timeStretch(inThread.pcm(await inThread.prepare(r), signal), tempo, r.sampleRate));
      const here = Buffer.concat(await collect(encodeWith(await createEncoder('pcm', r.sampleRate, 'stream'), feed(stretched))));
      assert.ok(there.length > 1000 && there.equals(here), `tempo ${tempo} differs`);
      assert.equal(stats.samples, there.length / 2);
    }
  });

  it('runs every output encoder once in each thread when warmed up', async () => {
    const warmed = await beside.warmUp();
    for (const name of ['resampler', 'pcm', 'wav', 'mp3', 'mulaw', 'alaw', 'opus', 'flac']) assert.ok(warmed.includes(name), `${name}: ${warmed.join(', ')}`);
  });

  it('stops at the output cap, and the workers keep serving', async () => {
    const long = request({ text: 'This sentence is long enough to take a while to say. '.repeat(12) });
    await assert.rejects(beside.wholeFile(await beside.prepare(long), { wavHeader: true }, signal), OutputTooLongError);
    const file = await beside.wholeFile(await beside.prepare(request()), { wavHeader: true }, signal);
    assert.ok(file.durationSeconds > 1);
  });
});

describe('output workers under a burst of long streams', () => {
  const LONG_STREAMS = 8;
  let engine: TtsEngine;
  const services: SynthesisService[] = [];
  after(async () => {
    for (const service of services) await service.close();
    await engine?.close();
  });

  /** Chunks the long streams receive between a new stream's request and its first chunk, on one thread taking `inFlight` calls at a time. */
  async function othersBeforeFirstChunk(inFlight: number): Promise<{ others: number; intact: boolean }> {
    engine ??= toneEngine();
    const deps = { voices: new VoiceRegistry([engine]), dicts: new PronunciationDictCache(noDicts, { maxBytes: 100_000 }) };
    // No stream counts as about to run dry (those go even before first audio): on a slow machine the
    // long streams would, and the order under test is first audio before later pieces.
    const scheduler = new SynthesisScheduler(100, -Infinity);
    const service = new SynthesisService({ ...deps, scheduler, output: new OutputWorkers(1, inFlight) });
    const reference = new SynthesisService(deps);
    services.push(service);
    const signal = new AbortController().signal;
    const long: SynthesisRequest = {
      accountId: 'acc-1',
      model: 'tts-v2',
      text: 'The morning train left the station at dawn. '.repeat(6),
      voiceId: 'tone-en',
      sampleRate: 24000,
      speed: 1,
      language: 'auto',
      outputFormat: 'mp3',
      pronunciationDicts: [],
    };
    let othersChunks = 0;
    let playing = 0;
    let everyonePlaying!: () => void;
    const allStarted = new Promise<void>((resolve) => (everyonePlaying = resolve));
    const longRuns = Array.from({ length: LONG_STREAMS }, async () => {
      const parts: Uint8Array[] = [];
      for await (const bytes of service.encodedStream(await service.prepare(long), signal)) {
        if (parts.length === 0 && ++playing === LONG_STREAMS) everyonePlaying();
        parts.push(bytes);
        othersChunks++;
      }
      return Buffer.concat(parts);
    });
    await allStarted;
    const before = othersChunks;
    let others = -1;
    for await (const bytes of service.encodedStream(await service.prepare({ ...long, text: 'A new listener.' }), signal)) {
      if (others < 0 && bytes.length) others = othersChunks - before;
    }
    const expected = Buffer.concat(await collect(reference.encodedStream(await reference.prepare(long), signal)));
    const intact = (await Promise.all(longRuns)).every((bytes) => bytes.equals(expected));
    return { others, intact };
  }

  it("sends a new stream's first chunk ahead of the playing streams' later pieces, each stream's bytes intact", async () => {
    // Its open, begin and first piece each wait only for the call the thread is already working on
    // (and a reply or two already on their way): fewer chunks than one per long stream.
    const prioritised = await othersBeforeFirstChunk(1);
    assert.ok(prioritised.intact, 'a long stream came out different from the event loop');
    assert.ok(prioritised.others < LONG_STREAMS, `${prioritised.others} chunks of other streams went first`);
    // Every call given to the thread at once is arrival order: each of those steps waits behind every long stream's next piece.
    const arrivalOrder = await othersBeforeFirstChunk(1000);
    assert.ok(arrivalOrder.intact);
    assert.ok(arrivalOrder.others >= 2 * LONG_STREAMS, `arrival order let only ${arrivalOrder.others} chunks go first`);
  });
});
