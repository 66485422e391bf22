/**
 * The playground at / in a real headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against a real server with the shared models, as a person uses it: a key, speech played,
 * replayed, compared and downloaded, a file and a URL transcribed and exported, live transcription
 * from a (fake) microphone fed with a corpus recording, a voice cloned from a recording, a
 * dictionary made and tried, the admin's pack reload; every view checked by axe-core. One browser
 * for the file, short audio. The run saves screenshots in the temp dir; `npm run docs:playground`
 * saves the ones docs/openai.md shows (docs/playground-*.png), so a test run leaves tracked files alone.
 * Its live transcription is docs/realtime.md's browser example: microphone samples over the socket.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS, sharedModel } from '../../helpers/models.js';
import { KEY_ROLES } from '../../../src/accounts/api-keys.js';
import { listCatalogue } from '../../../src/models/catalogue.js';
import { fetchFrom, npmVadTarball, packArchive, vadEntryFor } from '../../helpers/pack-archive.js';
import { skipWhenMissing } from '../../helpers/skip.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const CHROMIUM = process.env.PARLEY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_MISSING = skipWhenMissing(!existsSync(CHROMIUM) && `needs Chromium at ${CHROMIUM} (npm test's set-up installs Debian's chromium; PARLEY_TEST_CHROMIUM names another)`);
const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true }) || CHROMIUM_MISSING;
/** Where screenshots go: the temp dir, or docs/ for `npm run docs:playground`. */
const SCREENSHOTS = process.env.PARLEY_TEST_SCREENSHOTS ?? tmpdir();
const SPOKEN = 'en/jfk-inaugural-1961.wav';
/** The sample a voice is cloned from as an uploaded file, and what it says (the corpus label). */
const CLONE_SAMPLE = 'en/librispeech-1089-134686-0001.wav';
const CLONE_SAMPLE_TEXT = 'after early nightfall the yellow lamps would light up here and there the squalid quarter of the brothels';
/** A catalogue pack with no size or checksum recorded, so a hand-made archive installs under its id. */
const INSTALLED_PACK = 'vits-piper-en_US-amy-low';

const AXE_SOURCE = existsSync(createRequire(import.meta.url).resolve('axe-core')) ? readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') : '';

/** Violations of impact serious or critical that axe-core finds in the page as it is now. */
async function accessibilityProblems(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol: the page's CSP (no inline script) stays as it is.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.nodes.slice(0, 3).join(', ')}`);
}

const statusOf = (page: Page, id: string) => page.locator(`#${id}`).getAttribute('data-state');
/** Requests of each status line the test has seen settle: the next settled() waits for a newer one. */
const seenRuns = new Map<string, number>();
/** The text of status line `id` once the request started since the last call has finished (done, failed or stopped). */
async function settled(page: Page, id: string, timeout = 60_000): Promise<string> {
  const seen = seenRuns.get(id) ?? 0;
  await page.waitForFunction(
    ([statusId, before]) => {
      const status = document.getElementById(statusId as string)!;
      return Number(status.dataset.runs ?? 0) > (before as number) && status.dataset.state !== 'working';
    },
    [id, seen] as const,
    { timeout },
  );
  seenRuns.set(id, Number(await page.locator(`#${id}`).getAttribute('data-runs')));
  return (await page.locator(`#${id}`).textContent()) ?? '';
}
const audioDuration = async (page: Page, id: string) => {
  await page.waitForFunction((audioId) => (document.getElementById(audioId) as HTMLAudioElement).duration > 0, id);
  return page.$eval(`#${id}`, (a) => (a as HTMLAudioElement).duration);
};
async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: download.suggestedFilename(), bytes: await readFile((await download.path())!) };
}

describe('playground', { skip: NEEDS }, () => {
  let s: TestServer;
  let files: Server;
  let filesUrl: string;
  /** Bodies the loopback webhook received. */
  const hooks: unknown[] = [];
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    // Serves, on loopback, the corpus recording for the URL input (loopback allowed below as a
    // private host) and the pack archive that installs download (packFetch sends them here).
    const archive = packArchive(INSTALLED_PACK);
    // The default VAD as the npm registry serves it, for the install Transcription offers when the VAD is missing.
    const vadTarball = npmVadTarball();
    const vadEntry = vadEntryFor(vadTarball);
    files = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/hook') {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          hooks.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          res.writeHead(200).end('ok');
        });
      } else if (req.url === '/jfk.wav') res.writeHead(200, { 'content-type': 'audio/wav' }).end(readFileSync(corpusFile(SPOKEN)));
      else if (req.url === `/${INSTALLED_PACK}.tar.bz2`) res.writeHead(200, { 'content-length': archive.length }).end(archive);
      else if (req.url === `/${path.posix.basename(new URL(vadEntry.url).pathname)}`) res.writeHead(200, { 'content-length': vadTarball.length }).end(vadTarball);
      else res.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    s = await startTestServer({
      engines: true,
      config: {
        modelsDir: modelsDirWith(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile', 'fake-piper-tones-en_US-16k']),
        allowedPrivateHosts: ['127.0.0.1'],
        logLevel: 'warn',
      },
      packFetch: fetchFrom(filesUrl),
      catalogue: () => listCatalogue().map((e) => (e.id === vadEntry.id ? vadEntry : e)),
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // --no-sandbox: Chromium refuses to sandbox as root (CI runs as root). The autoplay flag
      // lets the AudioContext start without a real user's gesture. The fake media flags give
      // getUserMedia the corpus recording (looped) instead of a microphone.
      args: [
        '--no-sandbox',
        '--autoplay-policy=no-user-gesture-required',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${corpusFile(SPOKEN)}`,
      ],
    });
    page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (request) => {
      // A download's blob: URL is revoked once saved; that is not a failure of the page.
      if (!request.url().startsWith('blob:')) problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
    });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (!['blob:', 'data:'].includes(url.protocol) && url.origin !== s.url) problems.push(`third-party request: ${request.url()}`);
    });
  });
  after(async () => {
    await browser?.close();
    await s?.close();
    files?.close();
  });

  it('loads without console errors, every control labelled', async () => {
    const response = await page.goto(s.url + '/');
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-type'] ?? '', /^text\/html/);
    // The page holds a key: only its own files and API may run or be reached (a violation would be a console error below).
    assert.match(response?.headers()['content-security-policy'] ?? '', /default-src 'self'.*script-src 'self'.*style-src 'self'.*frame-ancestors 'none'/);
    await page.waitForLoadState('networkidle');
    assert.deepEqual(problems, []);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Parley playground');
    assert.equal(await page.getByRole('link', { name: /API reference/ }).getAttribute('href'), '/docs');
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea, audio')]
        .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
        .map((el) => el.id || el.outerHTML),
    );
    assert.deepEqual(unlabelled, []);
    for (const id of ['speak', 'audio-file', 'live-start', 'clone']) assert.equal(await page.locator(`#${id}`).isDisabled(), true, `#${id} waits for a key`);
  });

  it('with a key: voices with tags, packs, options a missing pack needs disabled and explained', async () => {
    await page.getByLabel(/Bearer key/).fill(s.key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.waitForFunction(() => (document.getElementById('voice') as HTMLSelectElement).options.length > 0);
    const voiceIds = await page.$$eval('#voice option', (options) => options.map((o) => (o as HTMLOptionElement).value));
    assert.ok(voiceIds.includes('espeak-en-us-female'), voiceIds.join(', '));
    const tags = await page.$$eval('#voice-tags li', (items) => items.map((li) => li.textContent));
    assert.ok(tags.includes('en') && tags.some((t) => t === 'male' || t === 'female'), tags.join(', '));
    assert.equal(await page.evaluate(() => localStorage.getItem('parley.apiKey')), s.key);
    const models = await page.$$eval('#model option', (options) => options.map((o) => (o as HTMLOptionElement).value));
    assert.ok(models.includes('tts-v2') && models.includes('fake-piper-tones-en_US-16k'), models.join(', '));
    // The packs' table fills in parallel with the voices.
    await page.waitForFunction(() => document.querySelectorAll('#packs tbody tr').length > 0);
    const packRows = await page.$$eval('#packs tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
    assert.ok(packRows.some((r) => r.includes('silero-vad-v5') && r.includes('loaded')), packRows.slice(0, 5).join(' | '));
    assert.ok(packRows.some((r) => r.includes('available')));
    // No diarization pack is installed: Speakers cannot be ticked, and the page says why.
    assert.equal(await page.getByLabel('Speakers').isDisabled(), true);
    assert.match((await page.locator('#diarize-reason').textContent()) ?? '', /needs a diarization pack/);
    assert.equal(await page.getByLabel('Speaker labels').isDisabled(), true);
    assert.match((await page.locator('#live-diarize-reason').textContent()) ?? '', /needs a diarization pack/);
    assert.equal(await page.getByLabel('Emotion').isDisabled(), false);
    // A pack takes no language or dictionary through /v1/audio/speech: chosen, those are disabled and explained.
    await page.locator('#model').selectOption('fake-piper-tones-en_US-16k');
    await page.waitForFunction(() => (document.getElementById('voice') as HTMLSelectElement).options.length > 0);
    assert.equal(await page.locator('#language').isDisabled(), true);
    assert.match((await page.locator('#speech-options-reason').textContent()) ?? '', /choose a generation/);
    assert.equal(await page.getByLabel(/Consistency/).isDisabled(), true);
    assert.match((await page.locator('#voice-controls-reason').textContent()) ?? '', /\/v1\/audio\/speech, which has no consistency/);
    // tts-v3.1 has no voice controls either; tts-v2 takes all three.
    await page.locator('#model').selectOption('tts-v3.1');
    await page.waitForFunction(() => (document.getElementById('voice') as HTMLSelectElement).options.length > 1);
    for (const control of [/Consistency/, /Similarity/, /Enhancement/]) assert.equal(await page.getByLabel(control).isDisabled(), true);
    assert.match((await page.locator('#voice-controls-reason').textContent()) ?? '', /^tts-v3\.1 has no consistency/);
    await page.locator('#model').selectOption('tts-v2');
    await page.waitForFunction(() => (document.getElementById('voice') as HTMLSelectElement).options.length > 1);
    assert.equal(await page.locator('#language').isDisabled(), false);
    for (const control of [/Consistency/, /Similarity/, /Enhancement/]) assert.equal(await page.getByLabel(control).isDisabled(), false);
    assert.equal(await page.locator('#voice-controls-reason').isVisible(), false);
    // An admin key: the pack tools are there.
    assert.equal(await page.getByRole('button', { name: 'Reload packs' }).isVisible(), true);
  });

  it('speaks as it streams, then replays with a waveform; Stop ends disabled; downloads wav and mp3', async () => {
    await page.locator('#voice').selectOption('espeak-en-us-female');
    await page.locator('#rate').selectOption('16000');
    await page.getByLabel(/Consistency/).fill('0.3');
    // Which word is marked as spoken, each time the mark moves.
    await page.evaluate(() => {
      const marked: number[] = [];
      (window as unknown as { marked: number[] }).marked = marked;
      const box = document.getElementById('speech-words')!;
      new MutationObserver(() => {
        const index = [...box.querySelectorAll('button.word')].findIndex((b) => b.getAttribute('aria-current') === 'true');
        if (index >= 0 && marked.at(-1) !== index) marked.push(index);
      }).observe(box, { subtree: true, attributes: true, attributeFilter: ['aria-current'] });
    });
    await page.getByRole('button', { name: 'Speak', exact: true }).click();
    assert.match(await settled(page, 'speech-status'), /^Done/);
    const ms = Number(await page.locator('#ttfa').getAttribute('data-ms'));
    const seconds = Number(await page.locator('#audio-seconds').getAttribute('data-seconds'));
    assert.ok(ms > 0, `time to first audio ${ms} ms`);
    assert.ok(seconds > 1, `${seconds} s of audio received`);
    assert.equal(await page.locator('#stop').isDisabled(), true, 'Stop is disabled once done');
    assert.equal(await page.locator('#speak').isDisabled(), false);
    // Each scheduled piece reports when it has finished sounding in the page's AudioContext.
    await page.waitForFunction((total) => Number(document.getElementById('audio-seconds')!.dataset.played) >= total - 0.01, seconds, { timeout: 60_000 });
    // Afterwards: an audio element holding all of it, and its waveform.
    assert.ok(Math.abs((await audioDuration(page, 'speech-audio')) - seconds) < 0.01);
    assert.equal(await page.locator('#speech-wave').isVisible(), true);

    // The words came with their times over the synthesis socket, and the mark moved forward through
    // them as the streamed audio played: from the first words to the last ones.
    const words = await page.$$eval('#speech-words button.word', (buttons) => buttons.map((b) => ({ word: b.textContent ?? '', start: Number(b.getAttribute('title')!.split('-')[0]) })));
    assert.deepEqual(
      words.map((w) => w.word.replace(/[^\w']/g, '').toLowerCase()),
      'hello this is parley a selfhosted speech server every word you hear was made on this machine'.split(' '),
    );
    const marked = await page.evaluate(() => (window as unknown as { marked: number[] }).marked);
    assert.ok(marked.length >= 3 && marked[0]! <= 1 && marked.at(-1)! >= words.length - 3, `marked while streaming: ${marked.join(' ')}`);
    assert.ok(marked.every((index, i) => i === 0 || index > marked[i - 1]!), `marked while streaming: ${marked.join(' ')}`);
    assert.ok(words.every((w, i) => i === 0 || w.start > words[i - 1]!.start) && words.at(-1)!.start < seconds, JSON.stringify(words));
    // The <audio> element drives the mark on replay: near the start the first word, further on a later one.
    const markedWord = () => page.locator('#speech-words button[aria-current=true]').textContent();
    await page.$eval('#speech-audio', (a, at) => ((a as HTMLAudioElement).currentTime = at), words[0]!.start + 0.02);
    await page.waitForFunction(() => document.querySelector('#speech-words button[aria-current=true]')?.textContent === 'Hello!');
    await page.$eval('#speech-audio', (a, at) => ((a as HTMLAudioElement).currentTime = at), words[8]!.start + 0.02);
    await page.waitForFunction((word) => document.querySelector('#speech-words button[aria-current=true]')?.textContent === word, words[8]!.word);
    // Played from a word: the mark follows the audio past it.
    await page.getByRole('button', { name: 'speech', exact: true }).click();
    await page.waitForFunction(
      () => [...document.querySelectorAll('#speech-words button.word')].findIndex((b) => b.getAttribute('aria-current') === 'true') > 7,
      undefined,
      { timeout: 20_000 },
    );
    assert.match((await markedWord()) ?? '', /^(speech|server\.|Every|word|you|hear|was|made|on|this|machine\.)$/);
    await page.$eval('#speech-audio', (a) => (a as HTMLAudioElement).pause());

    await page.locator('#format').selectOption('wav');
    const wav = await downloaded(page, () => page.getByRole('button', { name: 'Download' }).click());
    assert.equal(wav.name, 'parley-espeak-en-us-female.wav');
    assert.equal(wav.bytes.subarray(0, 4).toString('latin1'), 'RIFF');
    assert.equal(wav.bytes.readUInt32LE(24), 16000);
    assert.equal(wav.bytes.length, 44 + Math.round(seconds * 16000) * 2);
    await page.locator('#format').selectOption('mp3');
    const mp3 = await downloaded(page, () => page.getByRole('button', { name: 'Download' }).click());
    assert.equal(mp3.name, 'parley-espeak-en-us-female.mp3');
    assert.ok(mp3.bytes.subarray(0, 3).toString('latin1') === 'ID3' || (mp3.bytes[0] === 0xff && (mp3.bytes[1]! & 0xe0) === 0xe0), mp3.bytes.subarray(0, 4).toString('hex'));
    assert.deepEqual(problems, []);
  });

  it('a pack speaks through /v1/audio/speech at 24 kHz, with OpenAI speeds beyond the engines\' range', async () => {
    await page.locator('#model').selectOption('fake-piper-tones-en_US-16k');
    await page.waitForFunction(() => (document.getElementById('voice') as HTMLSelectElement).value.startsWith('fake-piper'));
    assert.equal(await page.locator('#speed').getAttribute('max'), '4');
    await page.locator('#speed').fill('3');
    assert.equal(await page.locator('#speed-value').textContent(), '3.00');
    await page.getByRole('button', { name: 'Speak', exact: true }).click();
    assert.match(await settled(page, 'speech-status'), /^Done/);
    const seconds = Number(await page.locator('#audio-seconds').getAttribute('data-seconds'));
    assert.ok(Math.abs((await audioDuration(page, 'speech-audio')) - seconds) < 0.01);
    // /v1/audio/speech has no word times: the page says so instead of marking words.
    assert.equal(await page.locator('#speech-words-box').isVisible(), false);
    assert.match((await page.locator('#speech-words-note').textContent()) ?? '', /sends no word times/);
    await page.locator('#format').selectOption('wav');
    const wav = await downloaded(page, () => page.getByRole('button', { name: 'Download' }).click());
    assert.equal(wav.bytes.readUInt32LE(24), 24000);
    assert.equal(wav.bytes.length, 44 + Math.round(seconds * 24000) * 2);
    await page.locator('#model').selectOption('tts-v2');
    await page.waitForFunction(() => (document.getElementById('voice') as HTMLSelectElement).options.length > 1);
    assert.equal(await page.locator('#speed-value').textContent(), '2.00', 'brought into the generation\'s range');
    await page.locator('#speed').fill('1');
    await page.locator('#voice').selectOption('espeak-en-us-female');
    assert.deepEqual(problems, []);
  });

  it('a failed request clears the previous result and says why in red', async () => {
    await page.locator('#text').fill('   ');
    await page.getByRole('button', { name: 'Speak', exact: true }).click();
    await settled(page, 'speech-status');
    assert.equal(await statusOf(page, 'speech-status'), 'failed');
    assert.match((await page.locator('#speech-status').getAttribute('class')) ?? '', /error/);
    assert.equal(await page.locator('#speech-audio').isVisible(), false, 'the previous audio is gone');
    assert.equal(await page.locator('#ttfa').textContent(), '–');
    assert.equal(await page.locator('#download').isDisabled(), true);
    assert.equal(await page.locator('#stop').isDisabled(), true);
    assert.equal(await page.locator('#speech-status').textContent(), 'Write some text to speak.');
    // A refusal from the server (a voice gone since the list was read) comes over the socket, said in red.
    await page.locator('#text').fill('Testing one two three.');
    await page.locator('#voice').evaluate((select) => (select as HTMLSelectElement).add(new Option('A deleted voice', 'voice-deleted-meanwhile')));
    await page.locator('#voice').selectOption('voice-deleted-meanwhile');
    await page.getByRole('button', { name: 'Speak', exact: true }).click();
    assert.match(await settled(page, 'speech-status'), /voice-deleted-meanwhile/);
    assert.equal(await statusOf(page, 'speech-status'), 'failed');
    assert.equal(await page.locator('#speech-words-box').isVisible(), false);
    assert.equal(await page.locator('#speak').isDisabled(), false);
    await page.locator('#voice').evaluate((select) => (select as HTMLSelectElement).options[(select as HTMLSelectElement).selectedIndex]!.remove());
    await page.locator('#voice').selectOption('espeak-en-us-female');
    assert.deepEqual(problems, []);
  });

  it('Stop ends a long synthesis while it streams: its socket is closed', async () => {
    await page.locator('#text').fill('This sentence is one of many in a long text. '.repeat(200));
    const socket = page.waitForEvent('websocket', (ws) => ws.url().includes('/get_speech/stream?'));
    await page.getByRole('button', { name: 'Speak', exact: true }).click();
    const ws = await socket;
    await page.waitForFunction(() => Number(document.getElementById('ttfa')!.dataset.ms) > 0);
    const closed = ws.isClosed() ? Promise.resolve() : ws.waitForEvent('close');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    assert.equal(await settled(page, 'speech-status'), 'Stopped.');
    await closed;
    assert.equal(await page.locator('#stop').isDisabled(), true);
    assert.equal(await page.locator('#speak').isDisabled(), false);
    const seconds = Number(await page.locator('#audio-seconds').getAttribute('data-seconds'));
    // The whole text is about ten minutes of speech: what arrived before Stop is a small part of it.
    assert.ok(seconds > 0 && seconds < 120, `${seconds} s received`);
    await page.locator('#text').fill('Testing one two three.');
    assert.deepEqual(problems, []);
  });

  it('previews a voice, and compares two voices side by side', async () => {
    await page.getByRole('button', { name: 'Preview voice' }).click();
    assert.match(await settled(page, 'speech-status'), /^Done/);
    assert.ok((await audioDuration(page, 'speech-audio')) > 0.5);
    await page.locator('#voice-a').selectOption('espeak-en-us-female');
    await page.locator('#voice-b').selectOption('espeak-en-us-male');
    await page.getByRole('button', { name: 'Compare with the same text' }).click();
    assert.match(await settled(page, 'compare-status'), /^Ready: espeak-en-us-female and espeak-en-us-male/);
    const [a, b] = [await audioDuration(page, 'compare-audio-a'), await audioDuration(page, 'compare-audio-b')];
    assert.ok(a > 0.5 && b > 0.5, `${a} s and ${b} s`);
    await page.locator('#speech').screenshot({ path: path.join(SCREENSHOTS, 'playground-speech.png') });
    assert.deepEqual(problems, []);
  });

  it('transcribes a file through OpenAI\'s route with a prompt: words seek the audio, export as SRT, VTT and JSON', async () => {
    await page.getByLabel('Emotion').check();
    // OpenAI's route takes a prompt; the Parley route's own fields are disabled, and the page says why.
    assert.equal(await page.getByLabel(/^Prompt/).isDisabled(), true);
    await page.locator('#route-openai').check();
    assert.equal(await page.getByLabel(/^Prompt/).isDisabled(), false);
    for (const control of [/^Keywords/, /^Webhook URL/, /^Webhook extra/, /^Numbers/, 'Sentence case', 'Redact personal', 'Redact card']) assert.equal(await page.getByLabel(control).isDisabled(), true, String(control));
    assert.match((await page.locator('#text-options-reason').textContent()) ?? '', /OpenAI's route takes a prompt/);
    assert.match((await page.locator('#route-reason').textContent()) ?? '', /webhook is a field of the Parley route/);
    await page.getByLabel(/^Prompt/).fill('Americans, country');
    // The form's text fields as the page hands them to fetch (the browser does not show a body holding a file).
    await page.evaluate(() => {
      const sent: [string, string][][] = [];
      const original = window.fetch;
      Object.assign(window, { sentForms: sent, originalFetch: original });
      window.fetch = (input, init) => {
        if (init?.body instanceof FormData) sent.push([...init.body.entries()].filter((e): e is [string, string] => typeof e[1] === 'string'));
        return original(input, init);
      };
    });
    await page.locator('#audio-file').setInputFiles(corpusFile(SPOKEN));
    assert.match(await settled(page, 'stt-status', 120_000), /^Transcribed jfk-inaugural-1961\.wav: 11\.0 s/);
    const words = await page.$$eval('#words tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const spoken = new Set(words.map(([w]) => w!.toLowerCase()));
    // The tiny test recogniser is not accurate; most of these come through.
    const expected = ['fellow', 'ask', 'not', 'what', 'you', 'can', 'do', 'for', 'country'];
    assert.ok(expected.filter((w) => spoken.has(w)).length >= 6, `words shown: ${[...spoken].join(' ')}`);
    for (const [, start, end] of words) assert.ok(Number(start) <= Number(end) && Number(end) <= 11.1, `${start}-${end}`);
    assert.match((await page.locator('#transcript').textContent()) ?? '', /country/i);
    assert.match((await page.locator('#analysis').textContent()) ?? '', /english/);
    assert.ok((await page.locator('#chart meter').count()) > 0, 'emotion scores drawn as bars');
    assert.ok(Math.abs((await audioDuration(page, 'stt-audio')) - 11) < 0.05);

    // A word plays the audio from where it is spoken.
    const country = page.locator('#transcript button.word', { hasText: /^country$/i }).first();
    const start = Number(((await country.getAttribute('title')) ?? '').split(' ')[0]);
    await country.click();
    const at = await page.$eval('#stt-audio', (a) => (a as HTMLAudioElement).currentTime);
    assert.ok(at >= start - 0.01 && at < start + 1, `audio at ${at} s, the word at ${start} s`);
    // The word being spoken is marked as the audio plays.
    await page.waitForFunction(() => /country/i.test(document.querySelector('#transcript button[aria-current=true]')?.textContent ?? ''));
    await page.$eval('#stt-audio', (a) => (a as HTMLAudioElement).pause());

    const srt = (await downloaded(page, () => page.getByRole('button', { name: 'Export SRT' }).click())).bytes.toString('utf8');
    assert.match(srt, /^1\n00:00:\d\d,\d{3} --> 00:00:\d\d,\d{3}\n\S/);
    assert.match(srt, /country/i);
    const vtt = await downloaded(page, () => page.getByRole('button', { name: 'Export VTT' }).click());
    assert.equal(vtt.name, 'jfk-inaugural-1961.vtt');
    assert.match(vtt.bytes.toString('utf8'), /^WEBVTT\n\n00:00:\d\d\.\d{3} --> 00:00:\d\d\.\d{3}\n/);
    const saved = JSON.parse((await downloaded(page, () => page.getByRole('button', { name: 'Export JSON' }).click())).bytes.toString('utf8'));
    assert.equal(saved.duration, 11);
    assert.equal(saved.words.length, words.length);
    assert.ok(saved.emotions && typeof saved.emotions === 'object');
    const forms = await page.evaluate(() => {
      const w = window as unknown as { sentForms: [string, string][][]; originalFetch: typeof fetch };
      window.fetch = w.originalFetch;
      return w.sentForms;
    });
    assert.equal(forms.length, 1);
    assert.deepEqual(forms[0]!.filter(([field]) => ['model', 'prompt', 'emotion_detection', 'response_format'].includes(field)), [
      ['model', 'whisper-1'],
      ['response_format', 'verbose_json'],
      ['emotion_detection', 'true'],
      ['prompt', 'Americans, country'],
    ]);
    await page.getByLabel(/^Prompt/).fill('');
    assert.deepEqual(problems, []);
  });

  it('transcribes a URL; a URL that fails clears the transcript on screen', async () => {
    await page.getByLabel('Or an audio URL').fill(`${filesUrl}/missing.wav`);
    await page.getByRole('button', { name: 'Transcribe URL' }).click();
    await settled(page, 'stt-status');
    assert.equal(await statusOf(page, 'stt-status'), 'failed');
    assert.match((await page.locator('#stt-status').textContent()) ?? '', /404/);
    assert.equal(await page.locator('#transcript-box').isVisible(), false, 'the previous transcript is gone');
    problems.splice(0);
    await page.getByLabel('Or an audio URL').fill(`${filesUrl}/jfk.wav`);
    await page.getByRole('button', { name: 'Transcribe URL' }).click();
    assert.match(await settled(page, 'stt-status', 120_000), /^Transcribed http:\/\/127\.0\.0\.1:\d+\/jfk\.wav: 11\.0 s/);
    assert.match((await page.locator('#transcript').textContent()) ?? '', /country/i);
    assert.deepEqual(problems, []);
  });

  it('transcribes a file through Parley\'s route with keywords, digits, formatting and redaction; then as a job posted to a webhook', async () => {
    await page.locator('#route-parley').check();
    assert.equal(await page.getByLabel(/^Prompt/).isDisabled(), true);
    assert.match((await page.locator('#route-reason').textContent()) ?? '', /prompt is a field of OpenAI's route/);
    await page.getByLabel(/^Keywords/).fill('americans:5, country:3');
    await page.getByLabel('Numbers').selectOption('true');
    for (const box of ['Sentence case and punctuation', 'Redact personal data', 'Redact card and bank data']) await page.getByLabel(box).check();
    const sent = page.waitForRequest((r) => r.url().includes('/api/v1/stt/get_text?'));
    await page.locator('#audio-file').setInputFiles(corpusFile(SPOKEN));
    const query = Object.fromEntries(new URL((await sent).url()).searchParams);
    assert.deepEqual(
      { keywords: query.keywords, numerals: query.numerals, format: query.format, redact_pii: query.redact_pii, redact_pci: query.redact_pci, word_timestamps: query.word_timestamps },
      { keywords: 'americans:5, country:3', numerals: 'true', format: 'true', redact_pii: 'true', redact_pci: 'true', word_timestamps: 'true' },
    );
    assert.match(await settled(page, 'stt-status', 120_000), /^Transcribed jfk-inaugural-1961\.wav: 11\.0 s/);
    assert.match((await page.locator('#transcript').textContent()) ?? '', /country/i);
    // format=true: the recogniser's capitals put in sentence case, each sentence ending with a mark.
    const saved = JSON.parse((await downloaded(page, () => page.getByRole('button', { name: 'Export JSON' }).click())).bytes.toString('utf8'));
    assert.match(saved.text, /^[A-Z][a-z]+ [a-z].*[a-z][.!?]$/);
    assert.ok(Math.abs((await audioDuration(page, 'stt-audio')) - 11) < 0.05);

    // With a webhook URL the file runs as a job: the page follows it to its delivery, then shows its result.
    await page.getByLabel(/^Webhook URL/).fill(`${filesUrl}/hook`);
    await page.getByLabel(/^Webhook extra/).fill('customer:42, batch:monday');
    await page.locator('#audio-file').setInputFiles(corpusFile(SPOKEN));
    const status = await settled(page, 'stt-status', 120_000);
    assert.match(status, new RegExp(`^Job \\S+ done: jfk-inaugural-1961\\.wav transcribed and posted to ${filesUrl}/hook, delivery attempt 1: HTTP 200\\.$`));
    assert.equal(hooks.length, 1);
    assert.match(JSON.stringify(hooks[0]), /country/i);
    assert.deepEqual([(hooks[0] as { customer?: string }).customer, (hooks[0] as { batch?: string }).batch], ['42', 'monday']);
    assert.match((await page.locator('#transcript').textContent()) ?? '', /country/i);
    assert.ok(Math.abs((await audioDuration(page, 'stt-audio')) - 11) < 0.05);
    await page.getByLabel(/^Webhook URL/).fill('');
    await page.getByLabel(/^Webhook extra/).fill('');
    await page.getByLabel(/^Keywords/).fill('');
    await page.getByLabel('Numbers').selectOption('auto');
    for (const box of ['Sentence case and punctuation', 'Redact personal data', 'Redact card and bank data']) await page.getByLabel(box).uncheck();
    await page.locator('#route-openai').check();
    assert.deepEqual(problems, []);
  });

  it('transcribes the microphone live over the WebSocket: partials in place, finals appended', async () => {
    // Every text the partial line shows, in order, to see it grow in place.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { partials: string[] }).partials = seen;
      const partial = document.getElementById('live-partial')!;
      new MutationObserver(() => seen.push(partial.textContent ?? '')).observe(partial, { childList: true, characterData: true, subtree: true });
    });
    for (const box of ['Speech start and end events', 'Sentence times', 'Full transcript']) await page.getByLabel(box).check();
    await page.getByLabel(/^End of utterance after/).fill('600');
    const socket = page.waitForEvent('websocket', (ws) => ws.url().includes('/api/v1/stt/get_text?'));
    await page.getByRole('button', { name: 'Start live transcription' }).click();
    const query = Object.fromEntries(new URL((await socket).url()).searchParams);
    assert.deepEqual(
      [query.encoding, query.sample_rate, query.vad_events, query.sentence_timestamps, query.full_transcript, query.eou_timeout_ms, query.endpointing, query.diarize],
      ['linear16', '16000', 'true', 'true', 'true', '600', 'true', 'false'],
    );
    await page.waitForFunction(() => document.getElementById('live-status')!.textContent?.startsWith('Listening'), undefined, { timeout: 20_000 });
    assert.equal(await page.locator('#live-start').isDisabled(), true);
    // The fake microphone plays the corpus recording: "And so, my fellow Americans" ends as the first final.
    await page
      .waitForFunction(() => /fellow|american/i.test(document.getElementById('live-finals')!.textContent ?? ''), undefined, { timeout: 60_000 })
      .catch(async (error: Error) => {
        throw new Error(`${error.message}; status: ${await page.locator('#live-status').textContent()}; finals: ${await page.locator('#live-finals').textContent()}; partial: ${await page.locator('#live-partial').textContent()}; sent ${await page.locator('#live-sent').textContent()}, ${await page.locator('#live-received').textContent()} results`);
      });
    await page.getByRole('button', { name: 'Stop listening' }).click();
    assert.match(await settled(page, 'live-status', 30_000), /^Stopped\. \d+ final results/);
    assert.equal(await page.locator('#live-stop').isDisabled(), true);
    assert.equal(await page.locator('#live-start').isDisabled(), false);
    const finals = await page.$$eval('#live-finals p', (ps) => ps.map((p) => p.textContent ?? ''));
    assert.ok(finals.length >= 1 && finals.every((f) => f.trim().length > 0), finals.join(' | '));
    // Partials replaced one another on one line, each a longer take of the utterance, and the line emptied at each final.
    const partials = (await page.evaluate(() => (window as unknown as { partials: string[] }).partials)).filter(Boolean);
    assert.ok(partials.length >= 2, partials.join(' | '));
    assert.ok(partials.some((p, i) => i > 0 && p.length > partials[i - 1]!.length), partials.join(' | '));
    assert.equal(await page.locator('#live-partial').textContent(), '');
    // The live options' answers: speech events, each sentence with its times, the whole transcript.
    const events = await page.$$eval('#live-events li', (items) => items.map((li) => li.textContent ?? ''));
    assert.match(events[0] ?? '', /^Speech started at \d+\.\d\d s$/, events.join(' | '));
    assert.ok(finals.every((f) => / \(\d+\.\d\d s-\d+\.\d\d s\)$/.test(f)), finals.join(' | '));
    assert.match((await page.locator('#live-full').textContent()) ?? '', /^Full transcript: .*(fellow|american)/i);
    for (const box of ['Speech start and end events', 'Sentence times', 'Full transcript']) await page.getByLabel(box).uncheck();
    assert.deepEqual(problems, []);
  });

  for (const encoding of ['ogg_opus', 'opus', 'linear32', 'mulaw', 'alaw']) {
    it(`transcribes the microphone live sent as ${encoding}`, async () => {
      await page.getByLabel('Encoding sent').selectOption(encoding);
      assert.equal(await page.locator('#live-encoding-reason').isVisible(), false, 'this Chromium encodes Opus (WebCodecs)');
      await page.getByRole('button', { name: 'Start live transcription' }).click();
      await page
        .waitForFunction(() => /fellow|american/i.test(document.getElementById('live-finals')!.textContent ?? ''), undefined, { timeout: 60_000 })
        .catch(async (error: Error) => {
          throw new Error(`${error.message}; status: ${await page.locator('#live-status').textContent()}; finals: ${await page.locator('#live-finals').textContent()}; partial: ${await page.locator('#live-partial').textContent()}`);
        });
      await page.getByRole('button', { name: 'Stop listening' }).click();
      assert.match(await settled(page, 'live-status', 30_000), /^Stopped\. \d+ final results/);
      await page.getByLabel('Encoding sent').selectOption('linear16');
      assert.deepEqual(problems, []);
    });
  }

  it('clones a voice from a recording, speaks with it and deletes it', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Recorded voice');
    await page.getByRole('button', { name: 'Record a sample' }).click();
    await page.waitForTimeout(6000);
    await page.getByRole('button', { name: 'Stop recording' }).click();
    await page.waitForFunction(() => /^Recorded sample/.test(document.getElementById('clone-sample')!.textContent ?? ''));
    await page.getByRole('button', { name: 'Clone', exact: true }).click();
    assert.match(await settled(page, 'clone-status', 60_000), /^Cloned: Recorded voice/);
    const row = page.locator('#clones tbody tr', { hasText: 'Recorded voice' });
    await page.waitForFunction(() => /completed|failed/.test(document.querySelector('#clones tbody tr')?.textContent ?? ''), undefined, { timeout: 60_000 });
    assert.match((await row.textContent()) ?? '', /completed/);
    await page.getByRole('button', { name: 'Speak with Recorded voice' }).click();
    assert.match(await settled(page, 'clones-status'), /^Recorded voice: \d+\.\d\d s of audio/);
    assert.ok((await audioDuration(page, 'clone-audio')) > 0.5);
    await page.locator('#voices').screenshot({ path: path.join(SCREENSHOTS, 'playground-voices.png') });
    await page.getByRole('button', { name: 'Delete Recorded voice' }).click();
    assert.match(await settled(page, 'clones-status'), /^Deleted Recorded voice/);
    assert.equal(await row.count(), 0);
    assert.deepEqual(problems, []);
  });

  it('clones a voice from an uploaded file: its status and profile, spoken with, deleted', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Uploaded voice');
    await page.getByLabel('Generation', { exact: true }).selectOption('tts-v3.1');
    await page.getByLabel(/^What the sample says/).fill(CLONE_SAMPLE_TEXT);
    await page.getByLabel('Sample file').setInputFiles(corpusFile(CLONE_SAMPLE));
    const sent = page.waitForRequest((r) => r.url().endsWith('/api/v1/tts-v3.1/add_voice'));
    await page.getByRole('button', { name: 'Clone', exact: true }).click();
    await sent;
    assert.match(await settled(page, 'clone-status', 60_000), /^Cloned: Uploaded voice \(\S+\), (processing|completed)\.$/);
    const row = page.locator('#clones tbody tr', { hasText: 'Uploaded voice' });
    await page.waitForFunction(() => [...document.querySelectorAll('#clones tbody tr')].some((r) => /Uploaded voice/.test(r.textContent ?? '') && /completed|failed/.test(r.textContent ?? '')), undefined, { timeout: 60_000 });
    const cells = await row.locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 3), ['Uploaded voice', 'tts-v3.1', 'completed']);
    // The clone's status line follows it to the end of its preparation.
    assert.match((await page.locator('#clone-status').textContent()) ?? '', /^Cloned: Uploaded voice \(\S+\), completed\.$/);
    // The profile measured from the sample (pitch and the like), shown as name: value pairs.
    assert.match(cells[3]!, /^\w+: [\w.-]+(, \w+: [\w.-]+)+$/);
    await page.getByRole('button', { name: 'Speak with Uploaded voice' }).click();
    assert.match(await settled(page, 'clones-status'), /^Uploaded voice: \d+\.\d\d s of audio/);
    assert.ok((await audioDuration(page, 'clone-audio')) > 0.5);
    await page.getByRole('button', { name: 'Delete Uploaded voice' }).click();
    assert.match(await settled(page, 'clones-status'), /^Deleted Uploaded voice/);
    assert.equal(await row.count(), 0);
    assert.equal(await page.locator('#clone-audio').isVisible(), false);
    assert.deepEqual(problems, []);
  });

  it('makes a dictionary, edits it, tries a word, and offers it to Speech', async () => {
    await page.getByLabel(/Words, one a line/).fill('Parley = parlay');
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await settled(page, 'dict-status'), /^Saved \S+: 1 words/);
    await page.getByLabel(/Words, one a line/).fill('Parley = parlay\nsherpa = sherper');
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await settled(page, 'dict-status'), /^Saved \S+: 2 words/);
    assert.match((await page.locator('#dict-list tbody').textContent()) ?? '', /Parley, sherpa/);
    await page.getByLabel('Try a word').fill('Parley');
    await page.getByRole('button', { name: 'Speak it' }).click();
    assert.match(await settled(page, 'dict-status'), /^"Parley" with \S+: \d+\.\d\d s of audio/);
    assert.ok((await audioDuration(page, 'dict-audio')) > 0.2);
    assert.match((await page.locator('#dicts').textContent()) ?? '', /\(2 words\)/);
    assert.deepEqual(problems, []);
  });

  it('an admin sees the inference processes, and reloads packs dropped into the models dir: Speakers becomes available', async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForFunction(() => /ready/.test(document.querySelector('#inference tbody')!.textContent ?? ''));
    const processes = await page.$$eval('#inference tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
    assert.ok(processes.some((r) => /ready \(pid \d+\)/.test(r)), processes.join(' | '));
    for (const pack of ['fake-pyannote-segmentation-energy', 'handmade-fbank-stats-speaker-embedding']) symlinkSync(sharedModel(pack), path.join(s.config.modelsDir, pack), 'dir');
    await page.getByRole('button', { name: 'Reload packs' }).click();
    assert.match(await settled(page, 'admin-status'), /^Reloaded: 5 loaded, 2 started/);
    assert.equal(await page.getByLabel('Speakers').isDisabled(), false);
    assert.equal(await page.locator('#diarize-reason').isVisible(), false);
    await page.locator('#packs-section').screenshot({ path: path.join(SCREENSHOTS, 'playground-packs.png') });
    assert.deepEqual(problems, []);
  });

  it('labels speakers: each speaker its colour, its share of the talk in the chart', async () => {
    await page.getByLabel('Speakers').check();
    await page.locator('#audio-file').setInputFiles(corpusFile(SPOKEN));
    assert.match(await settled(page, 'stt-status', 120_000), /^Transcribed jfk-inaugural-1961\.wav: 11\.0 s/);
    const classes = await page.$$eval('#transcript button.word', (words) => words.map((w) => w.className));
    assert.ok(classes.length > 0 && classes.every((c) => /speaker-\d/.test(c)), classes.slice(0, 5).join(' | '));
    assert.match((await page.locator('#chart').textContent()) ?? '', /Talk time: speaker_0/);
    assert.ok(Math.abs((await audioDuration(page, 'stt-audio')) - 11) < 0.05);
    await page.locator('#stt').screenshot({ path: path.join(SCREENSHOTS, 'playground-transcription.png') });
    await page.getByLabel('Speakers').uncheck();
    assert.deepEqual(problems, []);
  });

  it('labels speakers live too: each final with its speaker', async () => {
    assert.equal(await page.locator('#live-diarize-reason').isVisible(), false);
    await page.getByLabel('Speaker labels').check();
    const socket = page.waitForEvent('websocket', (ws) => ws.url().includes('/api/v1/stt/get_text?'));
    await page.getByRole('button', { name: 'Start live transcription' }).click();
    assert.equal(new URL((await socket).url()).searchParams.get('diarize'), 'true');
    await page.waitForFunction(() => /fellow|american/i.test(document.getElementById('live-finals')!.textContent ?? ''), undefined, { timeout: 60_000 });
    await page.getByRole('button', { name: 'Stop listening' }).click();
    assert.match(await settled(page, 'live-status', 30_000), /^Stopped\. \d+ final results/);
    const finals = await page.$$eval('#live-finals p', (ps) => ps.map((p) => p.textContent ?? ''));
    assert.ok(finals.length > 0 && finals.every((f) => /^speaker_\d+: \S/.test(f)), finals.join(' | '));
    await page.getByLabel('Speaker labels').uncheck();
    assert.deepEqual(problems, []);
  });

  it('an admin installs a pack with its download shown, verifies it and removes it; a failed install says why', async () => {
    await page.getByRole('button', { name: `Install ${INSTALLED_PACK}` }).click();
    assert.match(await settled(page, 'admin-status', 60_000), new RegExp(`^Installed ${INSTALLED_PACK} \\(\\d+ kB\\) and loaded it`));
    const bar = await page.$eval('#install-progress', (p) => ({ value: (p as HTMLProgressElement).value, max: (p as HTMLProgressElement).max, hidden: (p as HTMLElement).hidden }));
    assert.ok(!bar.hidden && bar.max > 1000 && bar.value === bar.max, JSON.stringify(bar));
    assert.match((await page.locator('#packs tbody tr', { hasText: INSTALLED_PACK }).textContent()) ?? '', /loaded/);
    // The new pack is offered to Speech at once.
    assert.ok((await page.$$eval('#model option', (o) => o.map((x) => (x as HTMLOptionElement).value))).includes(INSTALLED_PACK));

    await page.getByRole('button', { name: `Verify ${INSTALLED_PACK}` }).click();
    assert.equal(await settled(page, 'admin-status', 60_000), `${INSTALLED_PACK} loads and works.`);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Remove ${INSTALLED_PACK}` }).click();
    assert.equal(await settled(page, 'admin-status'), `Removed ${INSTALLED_PACK}.`);
    assert.match((await page.locator('#packs tbody tr', { hasText: INSTALLED_PACK }).textContent()) ?? '', /available/);

    // The archive of this one is not on the (loopback) download server: a 404, said in red.
    await page.getByRole('button', { name: 'Install vits-piper-en_US-ryan-medium' }).click();
    assert.match(await settled(page, 'admin-status'), /^vits-piper-en_US-ryan-medium was not installed: .*404/);
    assert.equal(await statusOf(page, 'admin-status'), 'failed');
    assert.equal(await page.locator('#install-progress').isVisible(), false);
    assert.deepEqual(problems, []);
  });

  it('issue 40: without a VAD, Transcription says so (the server\'s answer) and an admin installs the recommended one from there', async () => {
    // The VAD leaves the models dir; the recogniser stays.
    unlinkSync(path.join(s.config.modelsDir, 'silero-vad-v5'));
    assert.equal((await s.api('/api/v1/admin/models/reload', { method: 'POST' })).status, 200);
    await page.reload();
    // A reloaded page counts its status lines' requests from zero again.
    seenRuns.clear();
    await page.waitForFunction(() => (document.getElementById('stt-reason')?.textContent ?? '').length > 0);
    const reason = (await page.locator('#stt-reason').textContent()) ?? '';
    assert.match(reason, /^Transcription is unavailable: no voice activity detection \(VAD\) model is installed\. Install it with `parley models pull silero-vad`/);
    assert.doesNotMatch(reason, /recognition model/, 'the recogniser is there: only the VAD is named');
    assert.equal(await page.locator('#audio-file').isDisabled(), true);
    const install = page.getByRole('button', { name: 'Install silero-vad (voice activity detection)', exact: true });
    await install.waitFor();
    await install.click();
    assert.match(await settled(page, 'admin-status', 120_000), /^Installed silero-vad \(\d\.\d MB\) and loaded it/);
    await page.waitForFunction(() => !(document.getElementById('audio-file') as HTMLInputElement).disabled);
    assert.equal((await page.locator('#stt-reason').textContent()) ?? '', '');
    assert.equal(await page.locator('#stt-install').isVisible(), false);
    // A user key sees the same sentence and no install button.
    unlinkSync(path.join(s.config.modelsDir, 'silero-vad', 'silero_vad.onnx'));
    assert.equal((await s.api('/api/v1/admin/models/reload', { method: 'POST' })).status, 200);
    const user = await s.server.storage.apiKeys.create({ name: 'playground user', role: KEY_ROLES.user });
    await page.getByLabel(/Bearer key/).fill(user.key);
    await page.getByRole('button', { name: 'Use key' }).click();
    // The page asks the admin routes whether the key is an admin's: a user key's 403 there is the expected answer, which Chromium logs.
    await page.waitForFunction(() => document.getElementById('admin-tools')?.hidden === true);
    assert.match((await page.locator('#stt-reason').textContent()) ?? '', /no voice activity detection/);
    assert.equal(await page.locator('#stt-install').isVisible(), false);
    for (let waited = 0; !problems.some((p) => p.includes('status of 403')) && waited < 5000; waited += 50) await sleep(50);
    const expected403 = problems.findIndex((p) => p.includes('status of 403'));
    if (expected403 >= 0) problems.splice(expected403, 1);
    // Back to the admin key and a working VAD for the tests after this one.
    rmSync(path.join(s.config.modelsDir, 'silero-vad'), { recursive: true });
    symlinkSync(sharedModel('silero-vad-v5'), path.join(s.config.modelsDir, 'silero-vad-v5'), 'dir');
    assert.equal((await s.api('/api/v1/admin/models/reload', { method: 'POST' })).status, 200);
    await page.getByLabel(/Bearer key/).fill(s.key);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.waitForFunction(() => !(document.getElementById('audio-file') as HTMLInputElement).disabled);
    assert.deepEqual(problems, []);
  });

  it('axe-core finds no serious or critical violation, at desktop and phone width; nothing wider than a phone', async () => {
    assert.ok(AXE_SOURCE, 'axe-core is installed (devDependency)');
    for (const box of ['#transcript-box', '#speech-words-box']) await page.locator(box).evaluate((b) => ((b as HTMLElement).hidden = false));
    assert.deepEqual(await accessibilityProblems(page), []);
    const phone = await page.context().newPage();
    await phone.setViewportSize({ width: 360, height: 740 });
    await phone.goto(s.url + '/');
    await phone.waitForFunction(() => document.querySelectorAll('#packs tbody tr').length > 0);
    await phone.waitForLoadState('networkidle');
    const widths = await phone.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
      wide: [...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).map((e) => e.id || e.tagName).slice(0, 5),
    }));
    assert.ok(widths.page <= widths.viewport, `the page is ${widths.page} px wide on a ${widths.viewport} px phone: ${widths.wide.join(', ')}`);
    // Tables fit: no cell runs past the screen, and each cell names its column.
    const cut = await phone.evaluate(() => [...document.querySelectorAll('#packs td')].filter((td) => td.getBoundingClientRect().right > window.innerWidth + 1).length);
    assert.equal(cut, 0);
    assert.equal(await phone.locator('#packs tbody td').first().getAttribute('data-label'), 'Pack');
    assert.deepEqual(await accessibilityProblems(phone), []);
    // The dark scheme's colours pass too.
    await phone.emulateMedia({ colorScheme: 'dark' });
    assert.deepEqual(await accessibilityProblems(phone), []);
    await phone.close();
    assert.deepEqual(problems, []);
  });
});
