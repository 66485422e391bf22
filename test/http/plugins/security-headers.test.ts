/**
 * Security headers: every HTML page (/docs and its files, the playground) carries a CSP allowing
 * only the server's own files and no framing, plus X-Frame-Options; every response is nosniff.
 * The API docs still render under their policy in a real Chromium (a blocked script or style
 * would be a console error).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { skipWhenMissing } from '../../helpers/skip.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const CHROMIUM = process.env.PARLEY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_MISSING = skipWhenMissing(!existsSync(CHROMIUM) && `needs Chromium at ${CHROMIUM} (npm test's set-up installs Debian's chromium; PARLEY_TEST_CHROMIUM names another)`);

describe('security headers', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { logLevel: 'warn' } });
  });
  after(() => s?.close());

  it('every HTML page: CSP of own files only, no framing, no referrer', async () => {
    for (const page of ['/docs', '/docs/', '/docs/static/index.html', '/']) {
      const res = await fetch(s.url + page);
      assert.equal(res.status, 200, page);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, page);
      const csp = res.headers.get('content-security-policy') ?? '';
      for (const directive of ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"])
        assert.ok(csp.split('; ').includes(directive), `${page}: ${directive} in "${csp}"`);
      assert.doesNotMatch(csp, /script-src[^;]*unsafe/, page);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', page);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', page);
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer', page);
      await res.arrayBuffer();
    }
  });

  it('API answers are nosniff too', async () => {
    const res = await fetch(`${s.url}/api/v1/tts-v2/get_voices`);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  });

  it('/docs renders in Chromium under its policy, with no violation', { skip: CHROMIUM_MISSING }, async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error') problems.push(msg.text());
      });
      page.on('pageerror', (err) => problems.push(err.message));
      await page.goto(`${s.url}/docs`);
      await page.waitForSelector('.swagger-ui .info .title', { timeout: 15_000 });
      assert.match((await page.textContent('.swagger-ui .info .title')) ?? '', /Parley/);
      await page.waitForLoadState('networkidle');
      assert.deepEqual(problems.filter((p) => /Content Security Policy|Refused/i.test(p)), []);
    } finally {
      await browser.close();
    }
  });
});
