/**
 * The n8n community node for the service, sosumit001/n8n-nodes-smallestai @ c25efd36f08076bc9c2c8047fbe21dd06e577637
 * (package n8n-nodes-smallestai 0.1.8), pointed at Parley: its one transcription call,
 * nodes/Smallestai/operations/stt.operations.ts `handleSttTranscribe`, replayed as it builds it:
 * `POST <base>/api/v1/pulse/get_text` with the headers `Content-Type: application/octet-stream`
 * and `X-Source: n8n-smallestai-node`, the credential's `Authorization: Bearer <key>`
 * (credentials/SmallestaiApi.credentials.ts), the query `language` (default en), `age_detection`,
 * `gender_detection` and `emotion_detection` (the node's booleans, false unless set), and as body
 * the item's binary data as it is (whatever file a previous node produced). The node hands the
 * JSON answer on as the item's data, so the test checks the transcript and the fields asked for.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';
import { wordsOf } from '../../helpers/audio-formats.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

describe('the n8n node (n8n-nodes-smallestai 0.1.8): Transcribe Audio', { skip: NEEDS }, () => {
  let s: TestServer;
  before(async () => {
    const modelsDir = modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
    s = await startTestServer({ engines: true, config: { modelsDir, logLevel: 'silent', rateLimits: { transcription: { perMinute: 0 } } } });
  });
  after(() => s?.close());

  /** handleSttTranscribe's request for the binary `audio` with the node's additional options. */
  function nodeRequest(audio: Uint8Array, options: { language?: string; age_detection?: boolean; gender_detection?: boolean; emotion_detection?: boolean } = {}): Promise<Response> {
    const qs = new URLSearchParams({
      language: options.language || 'en',
      age_detection: String(options.age_detection ?? false),
      gender_detection: String(options.gender_detection ?? false),
      emotion_detection: String(options.emotion_detection ?? false),
    });
    return fetch(`${s.url}/api/v1/pulse/get_text?${qs}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'X-Source': 'n8n-smallestai-node', Authorization: `Bearer ${s.key}` },
      body: audio as Uint8Array<ArrayBuffer>,
    });
  }

  for (const file of ['en/jfk-inaugural-1961.wav', 'formats/jfk.mp3', 'formats/jfk.flac']) {
    it(`the node's defaults with a ${file.split('.').pop()} file: the transcript, with the bytes telling the format`, async () => {
      const res = await nodeRequest(readFileSync(corpusFile(file)));
      const item = (await res.json()) as { status: string; transcription: string; age?: string; gender?: string; emotions?: unknown };
      assert.equal(res.status, 200, JSON.stringify(item));
      assert.equal(item.status, 'success');
      assert.ok(wordsOf(item.transcription).length >= 5, item.transcription);
      assert.equal(item.age, undefined, 'not asked for');
      assert.equal(item.gender, undefined, 'not asked for');
      assert.equal(item.emotions, undefined, 'not asked for');
    });
  }

  it('with Gender Detection on: the item carries gender', async () => {
    const res = await nodeRequest(readFileSync(corpusFile('en/jfk-inaugural-1961.wav')), { gender_detection: true });
    const item = (await res.json()) as { transcription: string; gender?: string };
    assert.equal(res.status, 200, JSON.stringify(item));
    assert.ok(item.gender === 'male' || item.gender === 'female', JSON.stringify(item.gender));
  });

  it('a binary that is no audio: a 400 the node shows as its error, in the legacy body', async () => {
    const res = await nodeRequest(new TextEncoder().encode('%PDF-1.7 not audio'));
    const body = (await res.json()) as Record<string, string>;
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id']);
  });
});
