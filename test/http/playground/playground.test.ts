/**
 * The playground at / in a real headless Chromium (Debian's `chromium`, driven by playwright-core)
 * against a real server with the shared models: the page loads cleanly, lists voices once a key
 * is given, plays streamed speech, and transcribes an uploaded corpus file. The run saves a
 * screenshot in the temp dir; `npm run docs:playground` saves the one the README shows
 * (docs/playground.png), so a test run leaves tracked files alone.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { skipWhenMissing } from '../../helpers/skip.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const CHROMIUM = process.env.PARLEY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_MISSING = skipWhenMissing(!existsSync(CHROMIUM) && `needs Chromium at ${CHROMIUM} (npm test's set-up installs Debian's chromium; PARLEY_TEST_CHROMIUM names another)`);
const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true }) || CHROMIUM_MISSING;
const SCREENSHOT = process.env.PARLEY_TEST_SCREENSHOT ?? path.join(tmpdir(), 'parley-playground.png');
const SPOKEN = 'en/jfk-inaugural-1961.wav';

describe('playground', { skip: NEEDS }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    s = await startTestServer({
      engines: true,
      config: {
        modelsDir: modelsDirWith(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile', 'fake-piper-tones-en_US-16k']),
        logLevel: 'warn',
      },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // --no-sandbox: Chromium refuses to sandbox as root (CI runs as root). The autoplay flag
      // lets the AudioContext start without a real user's gesture.
      // The fake media flags give getUserMedia a generated tone instead of a microphone.
      args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
    });
    page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('loads without console errors, every control labelled, nothing wider than a phone', async () => {
    const response = await page.goto(s.url + '/');
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-type'] ?? '', /^text\/html/);
    // The page holds a key: only its own files and API may run or be reached (a violation would be a console error below).
    assert.match(response?.headers()['content-security-policy'] ?? '', /default-src 'self'.*script-src 'self'.*frame-ancestors 'none'/);
    await page.waitForLoadState('networkidle');
    assert.deepEqual(problems, []);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Parley playground');
    assert.equal(await page.getByRole('link', { name: /API reference/ }).getAttribute('href'), '/docs');
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')]
        .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label'))
        .map((el) => el.id || el.outerHTML),
    );
    assert.deepEqual(unlabelled, []);

    const phone = await browser.newPage({ viewport: { width: 360, height: 740 } });
    await phone.goto(s.url + '/');
    const widths = await phone.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth }));
    await phone.close();
    assert.ok(widths.page <= widths.viewport, `the page is ${widths.page} px wide on a ${widths.viewport} px phone`);
  });

  it('lists the voices, with their tags, once a key is entered; the key stays in the browser', async () => {
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
    // The packs table: installed packs with their state, and the catalogue's available ones.
    const packRows = await page.$$eval('#packs tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
    assert.ok(packRows.some((r) => r.includes('silero-vad-v5') && r.includes('loaded')), packRows.slice(0, 5).join(' | '));
    assert.ok(packRows.some((r) => r.includes('available')));
  });

  it('plays streamed speech and reports a non-zero time to first audio', async () => {
    await page.locator('#voice').selectOption('espeak-en-us-female');
    await page.getByRole('button', { name: 'Speak' }).click();
    await page.waitForFunction(() => document.getElementById('ttfa')!.dataset.ms !== '', undefined, { timeout: 60_000 });
    await page.waitForFunction(() => /^Done/.test(document.getElementById('speech-status')!.textContent ?? ''), undefined, { timeout: 60_000 });
    const ms = Number(await page.locator('#ttfa').getAttribute('data-ms'));
    const seconds = Number(await page.locator('#audio-seconds').getAttribute('data-seconds'));
    assert.ok(ms > 0, `time to first audio ${ms} ms`);
    assert.ok(seconds > 1, `${seconds} s of audio received`);
    // Each scheduled piece reports when it has finished sounding in the page's AudioContext.
    await page.waitForFunction((total) => Number(document.getElementById('audio-seconds')!.dataset.played) >= total - 0.01, seconds, { timeout: 60_000 });
  });

  it('transcribes an uploaded corpus file and shows its words with times', async () => {
    await page.locator('#audio-file').setInputFiles(corpusFile(SPOKEN));
    await page.waitForFunction(() => document.querySelectorAll('#words tbody tr').length > 0, undefined, { timeout: 120_000 });
    const words = await page.$$eval('#words tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const spoken = new Set(words.map(([w]) => w!.toLowerCase()));
    // The tiny test recogniser is not accurate; most of these come through.
    const expected = ['fellow', 'ask', 'not', 'what', 'you', 'can', 'do', 'for', 'country'];
    const found = expected.filter((w) => spoken.has(w));
    assert.ok(found.length >= 6, `words shown: ${[...spoken].join(' ')}`);
    for (const [, start, end] of words) assert.ok(Number(start) <= Number(end) && Number(end) <= 11.1, `${start}-${end}`);
    assert.match((await page.locator('#transcript').textContent()) ?? '', /country/i);
    assert.match((await page.locator('#analysis').textContent()) ?? '', /english/);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    assert.deepEqual(problems, []);
  });

  it('records from the (fake) microphone and sends the recording to be transcribed', async () => {
    // Same browser context: the key entered earlier is in its storage.
    const mic = await page.context().newPage();
    await mic.goto(s.url + '/');
    await mic.getByRole('button', { name: 'Record from microphone' }).click();
    await mic.waitForFunction(() => document.getElementById('stt-status')!.textContent === 'Recording…');
    await mic.waitForTimeout(1500);
    await mic.getByRole('button', { name: 'Stop recording and transcribe' }).click();
    // Chromium's fake device plays a beep: the recording (webm/opus) decodes, and has no words.
    await mic.waitForFunction(() => !/^(Recording|Transcribing)/.test(document.getElementById('stt-status')!.textContent ?? ''), undefined, { timeout: 60_000 });
    assert.match((await mic.locator('#stt-status').textContent()) ?? '', /Transcribed [1-2]\.\d s of audio/);
    await mic.close();
    assert.deepEqual(problems, []);
  });
});
