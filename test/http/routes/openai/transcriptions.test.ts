/**
 * POST /v1/audio/transcriptions and /translations driven by the official `openai` package, on the
 * real VAD and the tiny English streaming recogniser: the five response formats agree with each
 * other (srt and vtt parsed, verbose_json words inside the file), the SSE stream, and the 400s
 * that name their field. The tiny model is not accurate: nothing here measures accuracy.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../../helpers/models.js';
import { startTestServer, type TestServer } from '../../../helpers/server.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

const SPOKEN = 'en/jfk-inaugural-1961.wav';
const DURATION = 11;
const MAX_UPLOAD = 1024 * 1024;

let s: TestServer;
let client: OpenAI;
let audio: Uint8Array<ArrayBuffer>;

before(async () => {
  if (NEEDS) return; // every suite below is skipped, naming what is missing
  const modelsDir = modelsDirWith(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile']);
  s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'warn', limits: { maxUploadBytes: MAX_UPLOAD }, rateLimits: { transcription: { perMinute: 0 } } } });
  client = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1`, maxRetries: 0 });
  audio = new Uint8Array(readFileSync(corpusFile(SPOKEN)));
});
after(() => s?.close());

const file = () => toFile(audio, 'jfk.wav', { type: 'audio/wav' });

interface Cue {
  index?: number;
  start: number;
  end: number;
  text: string;
}

function seconds(time: string, separator: ',' | '.'): number {
  const match = new RegExp(`^(\\d{2}):(\\d{2}):(\\d{2})\\${separator}(\\d{3})$`).exec(time);
  assert.ok(match, `${time} is not HH:MM:SS${separator}mmm`);
  const [, h, m, sec, ms] = match.map(Number);
  return h! * 3600 + m! * 60 + sec! + ms! / 1000;
}

/** A strict reader of the subtitle files: every block must be well-formed. */
function parseSubtitles(text: string, format: 'srt' | 'vtt'): Cue[] {
  let body = text;
  if (format === 'vtt') {
    assert.ok(text.startsWith('WEBVTT\n\n'), 'a WebVTT file starts with its signature line and a blank line');
    body = text.slice('WEBVTT\n\n'.length);
  }
  const separator = format === 'srt' ? ',' : '.';
  return body
    .trim()
    .split(/\n\n+/)
    .map((block, i) => {
      const lines = block.split('\n');
      const cue: Cue = { start: 0, end: 0, text: '' };
      if (format === 'srt') {
        cue.index = Number(lines.shift());
        assert.equal(cue.index, i + 1, 'srt cues are numbered from 1');
      }
      const timing = /^(\S+) --> (\S+)$/.exec(lines.shift() ?? '');
      assert.ok(timing, `cue ${i + 1} has a timing line`);
      cue.start = seconds(timing[1]!, separator);
      cue.end = seconds(timing[2]!, separator);
      cue.text = lines.join(' ');
      assert.ok(cue.text.length > 0);
      return cue;
    });
}

describe('POST /v1/audio/transcriptions', { skip: NEEDS }, () => {
  type Segment = OpenAI.Audio.TranscriptionSegment & { speaker: string };
  let verbose: Omit<OpenAI.Audio.TranscriptionVerbose, 'segments'> & { task: string; segments: Segment[] };

  before(async () => {
    verbose = (await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await file(),
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    })) as typeof verbose;
  });

  it('verbose_json: task, language, duration, text, segments and words, every time inside the file', () => {
    assert.equal(verbose.task, 'transcribe');
    assert.equal(verbose.language, 'english');
    assert.ok(Math.abs(verbose.duration - DURATION) < 0.05, `${verbose.duration}`);
    assert.match(verbose.text, /country/i);
    assert.ok(verbose.segments.length >= 1);
    assert.ok(verbose.words!.length >= 10, `${verbose.words!.length} words`);
    let previous = 0;
    for (const w of verbose.words!) {
      assert.ok(w.start >= previous - 1e-9 && w.start <= w.end && w.end <= verbose.duration, `${w.word} ${w.start}-${w.end}`);
      previous = w.start;
    }
    for (const [i, seg] of verbose.segments.entries()) {
      assert.equal(seg.id, i);
      assert.ok(seg.start <= seg.end && seg.end <= verbose.duration);
      assert.equal(seg.speaker, 'speaker_0');
      const inside = verbose.words!.filter((w) => w.start >= seg.start - 1e-9 && w.end <= seg.end + 1e-9).map((w) => w.word);
      assert.equal(inside.join(' '), seg.text, 'a segment is the words it spans');
    }
    assert.equal(verbose.words!.map((w) => w.word).join(' '), verbose.text);
    assert.deepEqual(verbose.usage, { type: 'duration', seconds: verbose.duration });
  });

  it('json (the default): the text and the usage by duration, as OpenAI bills whisper-1', async () => {
    const json = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() });
    assert.deepEqual(Object.keys(json), ['text', 'usage']);
    assert.equal(json.text, verbose.text);
    assert.equal(json.usage?.type, 'duration');
    assert.ok(json.usage?.type === 'duration' && Math.abs(json.usage.seconds - DURATION) < 0.05, JSON.stringify(json.usage));
  });

  it('text: the text and a newline, as text/plain', async () => {
    const text = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await file(), response_format: 'text' });
    assert.equal(text, `${verbose.text}\n`);
  });

  for (const format of ['srt', 'vtt'] as const) {
    it(`${format}: well-formed cues, one per segment, at the segments' times`, async () => {
      const text = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await file(), response_format: format });
      const cues = parseSubtitles(text as unknown as string, format);
      assert.equal(cues.length, verbose.segments.length);
      for (const [i, cue] of cues.entries()) {
        const seg = verbose.segments[i]!;
        assert.equal(cue.text, seg.text);
        assert.ok(Math.abs(cue.start - seg.start) <= 0.0005 && Math.abs(cue.end - seg.end) <= 0.0005, `${cue.start}-${cue.end} vs ${seg.start}-${seg.end}`);
        assert.ok(cue.start < cue.end && cue.end <= DURATION);
      }
    });
  }

  it('timestamp_granularities[] word alone: words, no segments', async () => {
    const result = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), response_format: 'verbose_json', timestamp_granularities: ['word'] });
    assert.equal(result.segments, undefined);
    assert.deepEqual(result.words, verbose.words!.map(({ word, start, end, ...rest }) => ({ word, start, end, ...rest })));
  });

  it('stream: transcript.text.delta events that add up to transcript.text.done', async () => {
    const stream = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file(), stream: true });
    const events: Array<{ type: string; delta?: string; text?: string }> = [];
    for await (const event of stream) events.push(event as (typeof events)[number]);
    const done = events.pop()!;
    assert.equal(done.type, 'transcript.text.done');
    assert.equal(done.text, verbose.text);
    assert.ok(events.length >= 1 && events.every((e) => e.type === 'transcript.text.delta'));
    assert.equal(events.map((e) => e.delta).join(''), verbose.text);
  });

  it('prompt and temperature are accepted; Parley\'s analysis fields come under "parley"', async () => {
    const result = (await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await file(),
      prompt: 'Kennedy, inaugural address',
      temperature: 0,
      response_format: 'verbose_json',
      language: 'en',
      // Parley's own fields go through as extra form fields.
      ...({ gender_detection: 'true' } as object),
    })) as OpenAI.Audio.TranscriptionVerbose & { parley?: { gender?: string; analyzers?: Record<string, string> } };
    // The prompt's words are boosted as keywords, so the text may differ from the unprompted one; the words stay the speech's.
    assert.ok(result.text.split(' ').filter((w) => verbose.text.split(' ').includes(w)).length >= result.text.split(' ').length * 0.8, result.text);
    assert.ok(['male', 'female'].includes(result.parley?.gender ?? ''), JSON.stringify(result.parley));
    assert.ok(result.parley?.analyzers?.gender);
  });

  describe('refusals, in OpenAI shape, naming the field', () => {
    async function post(form: FormData, path = '/v1/audio/transcriptions') {
      const res = await s.api(path, { method: 'POST', body: form });
      return { status: res.status, body: (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } } };
    }
    function form(fields: Record<string, string | string[]>, withFile = true) {
      const f = new FormData();
      if (withFile) f.append('file', new Blob([audio], { type: 'audio/wav' }), 'jfk.wav');
      for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) f.append(k, one);
      return f;
    }

    it('missing or unknown fields and values', async () => {
      const cases: Array<[FormData, string, RegExp]> = [
        [form({ model: 'whisper-1' }, false), 'file', /file is required/],
        [form({}), 'model', /model is required/],
        [form({ model: 'whisper-2' }), 'model', /not a transcription model/],
        [form({ model: 'whisper-1', response_format: 'docx' }), 'response_format', /json, text, srt, verbose_json, vtt/],
        [form({ model: 'whisper-1', language: 'xx' }), 'language', /ISO 639-1/],
        [form({ model: 'whisper-1', response_format: 'verbose_json', 'timestamp_granularities[]': ['word', 'letter'] }), 'timestamp_granularities[]', /word and\/or segment/],
        [form({ model: 'whisper-1', 'timestamp_granularities[]': 'word' }), 'timestamp_granularities[]', /needs response_format verbose_json/],
        [form({ model: 'whisper-1', temperature: 'hot' }), 'temperature', /between 0 and 1/],
        [form({ model: 'whisper-1', stream: 'yes' }), 'stream', /true or false/],
        [form({ model: 'whisper-1', colour: 'blue' }), 'colour', /Unknown field/],
        [form({ model: ['whisper-1', 'whisper-1'] }), 'model', /given once/],
      ];
      for (const [body, param, message] of cases) {
        const { status, body: answer } = await post(body);
        assert.equal(status, 400, param);
        assert.equal(answer.error.type, 'invalid_request_error');
        assert.equal(answer.error.param, param);
        assert.match(answer.error.message, message);
      }
    });

    it('a body that is not a form, and bytes that are not audio', async () => {
      const raw = await s.api('/v1/audio/transcriptions', { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: audio });
      assert.equal(raw.status, 400);
      assert.equal(((await raw.json()) as { error: { message: string } }).error.message, 'Content-Type audio/wav is not accepted here: send multipart/form-data');
      const json = await s.api('/v1/audio/transcriptions', { method: 'POST', json: { model: 'whisper-1' } });
      assert.equal(json.status, 400);
      assert.match(((await json.json()) as { error: { message: string } }).error.message, /multipart\/form-data/);
      const f = new FormData();
      f.append('file', new Blob([Buffer.from('this is not audio at all')], { type: 'audio/wav' }), 'x.wav');
      f.append('model', 'whisper-1');
      const { status, body } = await post(f);
      assert.equal(status, 400);
      assert.match(body.error.message, /Invalid file format/);
    });

    it('malformed forms: no boundary, cut short, a field too long, two files: 400s, and the server goes on', async () => {
      const raw = async (contentType: string, body: string | Uint8Array) => {
        const res = await s.api('/v1/audio/transcriptions', { method: 'POST', headers: { 'content-type': contentType }, body: body as BodyInit });
        return { status: res.status, message: ((await res.json()) as { error: { message: string } }).error.message };
      };
      assert.deepEqual(await raw('multipart/form-data', 'x'), { status: 400, message: 'The multipart body has no boundary in its Content-Type' });
      const cut = '--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF';
      assert.deepEqual(await raw('multipart/form-data; boundary=b', cut), { status: 400, message: 'The multipart body is malformed' });
      const longPrompt = form({ model: 'whisper-1', prompt: 'p'.repeat(17 * 1024) });
      const { status, body } = await post(longPrompt);
      assert.equal(status, 400);
      assert.match(body.error.message, /The field prompt is longer than 16384 bytes/);
      const twoFiles = form({ model: 'whisper-1' });
      twoFiles.append('file', new Blob([audio], { type: 'audio/wav' }), 'again.wav');
      assert.match((await post(twoFiles)).body.error.message, /one file only/);
      const json = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() });
      assert.equal(json.text, verbose.text);
    });

    it('a file over the upload cap is 413, and the next request on the server is served', async () => {
      const big = new FormData();
      big.append('model', 'whisper-1');
      big.append('file', new Blob([new Uint8Array(MAX_UPLOAD + 1)], { type: 'audio/wav' }), 'big.wav');
      const { status, body } = await post(big);
      assert.equal(status, 413);
      assert.equal(body.error.code, 'payload_too_large');
      assert.match(body.error.message, new RegExp(String(MAX_UPLOAD)));
      const json = await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() });
      assert.equal(json.text, verbose.text);
    });

    it('a wrong key is the AuthenticationError', async () => {
      const other = new OpenAI({ apiKey: 'sk_not_a_key_of_this_server_000000000000', baseURL: `${s.url}/v1`, maxRetries: 0 });
      await assert.rejects(other.audio.transcriptions.create({ model: 'whisper-1', file: await file() }), OpenAI.AuthenticationError);
    });
  });
});

describe('POST /v1/audio/translations', { skip: NEEDS }, () => {
  it('is a BadRequestError that names why: no installed recogniser translates', async () => {
    await assert.rejects(client.audio.translations.create({ model: 'whisper-1', file: await file() }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      const body = err.error as { message: string; code: string; param: string };
      assert.equal(body.code, 'translation_unavailable');
      assert.equal(body.param, 'model');
      assert.match(body.message, /none of the installed recognisers can translate/);
      return true;
    });
  });
});
