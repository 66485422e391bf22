/**
 * The fuzz generator: case number `index` of run `seed` is always the same request, so a failure
 * is replayed with PARLEY_FUZZ_SEED and PARLEY_FUZZ_CASE. Cases cover every endpoint (synthesis,
 * voices, pronunciation dictionaries, transcription with bytes and with URLs, job status) and
 * every decoder: random bytes behind real magic numbers, mutated real files of the corpus,
 * extreme header values, huge declared sizes and a decompression bomb per codec.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { allBombs } from './bombs.js';
import { aiff, flacHeader, floatsWith, tone16, wav } from './hostile-audio.js';

/** sfc32, seeded from (seed, index) through splitmix32: cheap, good enough, and replayable. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, index: number) {
    let s = (seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    [this.a, this.b, this.c, this.d] = [next(), next(), next(), next()];
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

export interface FuzzCase {
  /** What kind of input this is, for the report. */
  kind: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  /** The request is sent without the API key. */
  anonymous?: boolean;
}

export interface FuzzContext {
  /** Voice ids the server lists, for synthesis cases that get past validation. */
  voices: string[];
  /** Files of the corpus, as seeds for mutation. */
  corpus: Uint8Array[];
  /** Base URL of the loopback file server: `${files}/<hex of the bytes' seed>`. */
  filesUrl: string;
  /** Bombs by codec (built once per run), scaled to pass the cap. */
  bombs: Record<string, { bytes: Uint8Array; contentType: string }>;
}

/** Corpus files small enough to mutate quickly (< 400 KB), the format variants first. */
export function loadCorpus(corpusDir: string): Uint8Array[] {
  const lines = readFileSync(path.join(corpusDir, 'manifest.jsonl'), 'utf8').split('\n').filter(Boolean);
  return lines
    .map((line) => JSON.parse(line) as { file: string; bytes: number })
    .filter((e) => e.bytes < 400_000)
    .map((e) => new Uint8Array(readFileSync(path.join(corpusDir, e.file))));
}

export function buildBombs(seconds: number): FuzzContext['bombs'] {
  return allBombs(seconds);
}

const AUDIO_TYPES = ['audio/wav', 'audio/x-wav', 'audio/mpeg', 'audio/flac', 'audio/ogg', 'audio/webm', 'audio/mp4', 'audio/aac', 'audio/aiff', 'audio/basic', 'audio/pcm', 'audio/L16;rate=8000;channels=2', 'audio/pcm;rate=48000', 'audio/x-unknown'];
const OTHER_TYPES = ['text/plain', 'application/octet-stream', 'image/png', 'multipart/form-data', 'audio/', 'application/json', '', 'audio/pcm;rate=', 'audio/pcm;rate=99999999999', 'audio/pcm;channels=-1', 'audio/wav; charset=utf-8'];
const MAGICS: Record<string, number[]> = {
  wav: [...Buffer.from('RIFF'), 0xff, 0xff, 0xff, 0xff, ...Buffer.from('WAVEfmt ')],
  rf64: [...Buffer.from('RF64'), 0xff, 0xff, 0xff, 0xff, ...Buffer.from('WAVEds64')],
  aiff: [...Buffer.from('FORM'), 0, 0, 0x10, 0, ...Buffer.from('AIFFCOMM')],
  aifc: [...Buffer.from('FORM'), 0, 0, 0x10, 0, ...Buffer.from('AIFCCOMM')],
  flac: [...Buffer.from('fLaC'), 0, 0, 0, 34],
  ogg: [...Buffer.from('OggS'), 0, 2],
  oggOpus: [...Buffer.from('OggS'), 0, 2, ...new Array(20).fill(0), 1, 19, ...Buffer.from('OpusHead')],
  oggVorbis: [...Buffer.from('OggS'), 0, 2, ...new Array(20).fill(0), 1, 30, 1, ...Buffer.from('vorbis')],
  webm: [0x1a, 0x45, 0xdf, 0xa3],
  mp4: [0, 0, 0, 0x20, ...Buffer.from('ftypM4A ')],
  id3: [...Buffer.from('ID3'), 4, 0, 0, 0, 0, 0, 0x10],
  mp3: [0xff, 0xfb, 0x90, 0x64],
  adts: [0xff, 0xf1, 0x50, 0x80],
  amr: [...Buffer.from('#!AMR\n')],
};
const EXTREME_INTS = [0, 1, 2, 7, 8, 255, 256, 3999, 4000, 384000, 384001, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1];

function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** Random damage to a real file: flips, extreme bytes, cuts, repeats, inserted junk. */
function mutate(rng: Rng, source: Uint8Array): Uint8Array {
  let out: Uint8Array = new Uint8Array(source);
  const rounds = 1 + rng.int(6);
  for (let r = 0; r < rounds; r++) {
    const at = out.length ? (rng.chance(0.5) ? rng.int(Math.min(out.length, 256)) : rng.int(out.length)) : 0;
    switch (rng.int(7)) {
      case 0: // bit flips
        for (let i = 0, n = 1 + rng.int(16); i < n && out.length; i++) out[rng.int(out.length)] ^= 1 << rng.int(8);
        break;
      case 1: // an extreme 32-bit value, either endianness, near the header
        if (at + 4 <= out.length) new DataView(out.buffer).setUint32(at, rng.pick(EXTREME_INTS) >>> 0, rng.chance(0.5));
        break;
      case 2: // cut
        out = out.subarray(0, rng.int(out.length + 1));
        break;
      case 3: // a slice repeated
        if (out.length > 16) {
          const from = rng.int(out.length - 8);
          const slice = out.subarray(from, from + 8 + rng.int(4096));
          out = concat(out.subarray(0, at), ...new Array(1 + rng.int(64)).fill(slice), out.subarray(at));
        }
        break;
      case 4: // junk inserted
        out = concat(out.subarray(0, at), rng.bytes(1 + rng.int(512)), out.subarray(at));
        break;
      case 5: // a run of 0x00 or 0xFF
        out.fill(rng.chance(0.5) ? 0 : 0xff, at, at + 1 + rng.int(64));
        break;
      default: // a chunk of the file deleted
        out = concat(out.subarray(0, at), out.subarray(Math.min(out.length, at + 1 + rng.int(4096))));
    }
  }
  return out;
}

function sttBytes(kind: string, bytes: Uint8Array, contentType: string): FuzzCase {
  return { kind, method: 'POST', path: '/api/v1/stt/get_text', headers: contentType ? { 'content-type': contentType } : {}, body: bytes };
}

function transcriptionCase(rng: Rng, ctx: FuzzContext): FuzzCase {
  const roll = rng.next();
  if (roll < 0.35 && ctx.corpus.length) {
    return sttBytes('stt: mutated corpus file', mutate(rng, rng.pick(ctx.corpus)), rng.pick(AUDIO_TYPES));
  }
  if (roll < 0.55) {
    const [name, magic] = rng.pick(Object.entries(MAGICS));
    const body = concat(Uint8Array.from(magic), rng.bytes(rng.int(rng.chance(0.1) ? 200_000 : 4_000)));
    return sttBytes(`stt: random bytes behind ${name} magic`, body, rng.pick(AUDIO_TYPES));
  }
  if (roll < 0.75) {
    const data = rng.chance(0.5) ? tone16(rng.next() * 2) : rng.bytes(rng.int(20_000));
    const extreme = () => rng.pick(EXTREME_INTS);
    const pick = rng.int(5);
    if (pick === 0) {
      return sttBytes('stt: WAV with extreme header values', wav(data, {
        formatTag: rng.pick([1, 3, 6, 7, 0xfffe, 2, 0, 65535]),
        channels: rng.chance(0.5) ? extreme() % 65536 : 1 + rng.int(9),
        sampleRate: rng.chance(0.5) ? extreme() : rng.pick([8000, 16000, 44100, 48000]),
        bitsPerSample: rng.pick([0, 1, 4, 8, 12, 16, 24, 32, 48, 64, 65535]),
        blockAlign: rng.chance(0.3) ? extreme() % 65536 : undefined,
      }), 'audio/wav');
    }
    if (pick === 1) {
      return sttBytes('stt: WAV with a huge declared size', wav(data, { declaredDataBytes: rng.pick([2 ** 31, 2 ** 32 - 1, 0, 2 ** 32 - 2]), declaredFmtBytes: rng.pick([16, 18, 40, 2 ** 31, 0]) }), 'audio/wav');
    }
    if (pick === 2) {
      return sttBytes('stt: AIFF with extreme header values', aiff(data, {
        channels: extreme() % 65536,
        sampleRate: rng.pick([0, 1, 8, 3999, 16000, 1e6, 1e300, Infinity]),
        bitsPerSample: rng.pick([0, 8, 16, 33, 65535]),
        frames: rng.chance(0.5) ? extreme() : undefined,
      }), 'audio/aiff');
    }
    if (pick === 3) {
      const header = flacHeader({ sampleRate: rng.pick([0, 1, 8000, 655350, 1048575]), channels: 1 + rng.int(8), bitsPerSample: 1 + rng.int(32), totalSamples: rng.pick([0, 1, 2 ** 36 - 1, 2 ** 32]) });
      return sttBytes('stt: FLAC with extreme STREAMINFO', concat(header, rng.bytes(rng.int(4000))), 'audio/flac');
    }
    const special = rng.pick([NaN, Infinity, -Infinity, 1e30, -1e-45]);
    return sttBytes('stt: float WAV with NaN/Inf/huge samples', wav(floatsWith(special, 8000), { formatTag: 3, bitsPerSample: 32 }), 'audio/wav');
  }
  if (roll < 0.85) {
    const type = rng.pick(['audio/pcm', 'audio/l16', 'audio/basic', 'audio/pcma', 'audio/raw']);
    const params = rng.pick(['', `;rate=${rng.pick(EXTREME_INTS)}`, `;channels=${rng.int(12)}`, ';rate=8000;channels=2', ';rate=abc', `;rate=${rng.next()}`]);
    return sttBytes('stt: headerless PCM with hostile parameters', rng.bytes(rng.int(rng.chance(0.2) ? 100_000 : 3_000)), type + params);
  }
  if (roll < 0.9) {
    const sizes = [0, 1, 2, 3, 4, 11, 12, 44];
    return sttBytes('stt: tiny body', rng.bytes(rng.pick(sizes)), rng.pick([...AUDIO_TYPES, ...OTHER_TYPES]));
  }
  if (roll < 0.97) {
    return sttBytes('stt: unknown content type', rng.chance(0.5) && ctx.corpus.length ? rng.pick(ctx.corpus) : rng.bytes(rng.int(2000)), rng.pick(OTHER_TYPES));
  }
  // Bombs go unmutated: a damaged bomb is often hours of valid silence just under the cap, which is
  // accepted and then takes the pipeline minutes, a cost of legitimate long audio, not of decoding.
  const [codec, bomb] = rng.pick(Object.entries(ctx.bombs));
  return sttBytes(`stt: decompression bomb (${codec})`, bomb.bytes, bomb.contentType);
}

function urlCase(rng: Rng, ctx: FuzzContext): FuzzCase {
  const roll = rng.int(6);
  const fileSeed = rng.int(2 ** 31).toString(16);
  const url = [
    `${ctx.filesUrl}/file/${fileSeed}`,
    `${ctx.filesUrl}/bomb/${rng.int(Object.keys(ctx.bombs).length)}`,
    'http://169.254.169.254/latest/meta-data',
    'file:///etc/passwd',
    `http://[::ffff:127.0.0.1]:1/${'a'.repeat(rng.int(3000))}`,
    rng.pick(['', 'not a url', 'http://', 'ftp://example.com/a.wav', 'http://user:pw@127.0.0.1/a.wav', 'http://0x7f000001/a.wav']),
  ][roll];
  const body = rng.chance(0.9) ? JSON.stringify({ url }) : rng.pick(['{"url": 5}', '[]', 'null', '{"url":', JSON.stringify({ url: { href: url } })]);
  return { kind: `stt url: ${['random bytes', 'bomb', 'link-local', 'file scheme', 'mapped loopback', 'malformed'][roll]}`, method: 'POST', path: '/api/v1/stt/get_text' + (rng.chance(0.2) ? hostileQuery(rng) : ''), headers: { 'content-type': 'application/json' }, body };
}

function hostileQuery(rng: Rng): string {
  return rng.pick([
    '?language=xx',
    '?word_timestamps=yes',
    '?diarize=true&diarize=false',
    '?model=stt&model=other',
    `?filename=${'x'.repeat(5000)}`,
    '?webhook_url=http://127.0.0.1:1/hook',
    '?webhook_extra=notjson',
    '?language=%00',
    `?${'a'.repeat(rng.int(9000))}=1`,
  ]);
}

/**
 * Hostile texts within the length limit stay short: a valid 10,000-character text is minutes of
 * audio, whose synthesis time is the synthesis bounds' concern, not a parser's. Texts past the
 * limit are sent too (400).
 */
const HOSTILE_TEXT = ['', ' ', '\u0000', '\uFFFF\uD800', '🙂'.repeat(300), '<speak>x</speak>', '1'.repeat(400), 'Dr. St. 12/12/2024 $3.50 5:30pm', 'a '.repeat(300)];

function synthesisCase(rng: Rng, ctx: FuzzContext): FuzzCase {
  const model = rng.pick(['tts-v2', 'tts-v3.1', 'tts-large']);
  const endpoint = rng.pick(['stream', 'get_speech']);
  const voice = rng.chance(0.8) && ctx.voices.length ? rng.pick(ctx.voices) : rng.pick(['', 'nope', 'x'.repeat(5000), 'voice_0000000000', '../../etc/passwd']);
  const text = rng.chance(0.6) ? rng.pick(['Hello there.', 'Ask not what your country can do for you.', 'Une phrase en français.', '12 345 people paid $6.70 on 3/4/2021.']) : rng.pick(HOSTILE_TEXT) + (rng.chance(0.1) ? 'x'.repeat(10_001) : '');
  const body: Record<string, unknown> = { text, voice_id: voice };
  const extremes = [-1, 0, 0.5, 2, 2.0001, 1e308, NaN, 'fast', null, [], {}, true];
  if (rng.chance(0.5)) body.sample_rate = rng.pick([8000, 16000, 24000, 44100, 7999, 24001, 0, -1, 1e9, '16000', 16000.5]);
  if (rng.chance(0.4)) body.speed = rng.pick(extremes);
  if (rng.chance(0.4)) body.output_format = rng.pick(['pcm', 'wav', 'mp3', 'mulaw', 'flac', '', 5]);
  if (rng.chance(0.2)) body.language = rng.pick(['auto', 'en', 'fr', 'xx', '', 3]);
  if (rng.chance(0.2)) body.pronunciation_dicts = rng.pick([[], ['nope'], new Array(101).fill('x'), 'x', [5]]);
  if (rng.chance(0.1)) body.consistency = rng.pick(extremes);
  if (rng.chance(0.1)) body.add_wav_header = rng.pick([false, 'no', 0]);
  let raw = JSON.stringify(body);
  if (rng.chance(0.08)) raw = raw.slice(0, rng.int(raw.length)); // cut JSON
  if (rng.chance(0.04)) raw = rng.pick(['[]', 'null', '"text"', '{"text": "a", "voice_id": "a", "__proto__": {"x": 1}}']);
  const type = rng.chance(0.95) ? 'application/json' : rng.pick(OTHER_TYPES);
  return { kind: `synthesis ${endpoint}`, method: 'POST', path: `/api/v1/${model}/${endpoint}`, headers: type ? { 'content-type': type } : {}, body: raw, anonymous: rng.chance(0.03) };
}

function dictionaryCase(rng: Rng): FuzzCase {
  const method = rng.pick(['GET', 'POST', 'PUT', 'DELETE'] as const);
  const item = () => rng.pick([
    { word: 'tomato', pronunciation: 'tomahto' },
    { word: '', pronunciation: 'x' },
    { word: 'x'.repeat(201), pronunciation: 'y' },
    { word: 'a', pronunciation: 'b'.repeat(501) },
    { word: 'ipa', pronunciation: '/təˈmɑːtoʊ/' },
    { word: '.*', pronunciation: '(a+)+$' },
    { word: 5, pronunciation: null },
  ]);
  const items = rng.chance(0.1) ? new Array(rng.pick([0, 10_001])).fill({ word: 'a', pronunciation: 'b' }) : Array.from({ length: rng.int(6) }, item);
  const id = rng.pick(['', 'nope', 'x'.repeat(10_000), '00000000-0000-0000-0000-000000000000', 5, null]);
  const body = method === 'GET' ? undefined : JSON.stringify(method === 'POST' ? { items } : method === 'PUT' ? { id, items } : { id });
  return { kind: `dictionaries ${method}`, method, path: '/api/v1/pronunciation-dicts', headers: body ? { 'content-type': 'application/json' } : {}, body };
}

function voicesCase(rng: Rng): FuzzCase {
  const path = rng.pick(['/api/v1/tts-v2/get_voices', '/api/v1/tts-v3.1/get_voices', '/api/v1/tts-large/get_cloned_voices', `/api/v1/tts-v2/get_voices?${'q'.repeat(rng.int(5000))}=1`]);
  if (rng.chance(0.2)) {
    return { kind: 'voices DELETE', method: 'DELETE', path: '/api/v1/tts-large', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ voiceId: rng.pick(['voice_0000000000', '', 'x'.repeat(3000)]) }) };
  }
  return { kind: 'voices GET', method: 'GET', path, headers: {}, anonymous: rng.chance(0.1) };
}

function jobsCase(rng: Rng): FuzzCase {
  const id = rng.pick(['x', 'a'.repeat(129), 'a'.repeat(20_000), '%00', '..%2F..%2Fetc', encodeURIComponent('\u{1F600}'), 'req_' + rng.int(1e9)]);
  return { kind: 'jobs status', method: 'GET', path: `/api/v1/stt/jobs/${id}`, headers: {}, anonymous: rng.chance(0.1) };
}

/** Case `index` of run `seed`. */
export function generateCase(seed: number, index: number, ctx: FuzzContext): FuzzCase {
  const rng = new Rng(seed, index);
  const roll = rng.next();
  if (roll < 0.55) return transcriptionCase(rng, ctx);
  if (roll < 0.6) return urlCase(rng, ctx);
  if (roll < 0.8) return synthesisCase(rng, ctx);
  if (roll < 0.85) return voicesCase(rng);
  if (roll < 0.95) return dictionaryCase(rng);
  return jobsCase(rng);
}

/** The bytes the loopback file server sends for `/file/<hex seed>`: random, or a mutated corpus file. */
export function fileServerBytes(seedHex: string, ctx: FuzzContext): Uint8Array {
  const rng = new Rng(parseInt(seedHex, 16) || 0, 0);
  return rng.chance(0.5) && ctx.corpus.length ? mutate(rng, rng.pick(ctx.corpus)) : rng.bytes(rng.int(50_000));
}
