/** docs/compatibility.md is the page the contract list makes: `npm run docs:compatibility` rewrites it. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { compatibilityPage, pagePath } from '../../scripts/compatibility-page.js';
import { loadContract } from '../../scripts/contract/contract.js';

it('docs/compatibility.md equals the page made from test/contract/waves-speech.json (npm run docs:compatibility)', () => {
  assert.equal(readFileSync(pagePath, 'utf8'), compatibilityPage(loadContract()));
});

it('the page names every operation with its status', () => {
  const page = compatibilityPage(loadContract());
  for (const op of [...loadContract().operations, ...loadContract().notOffered]) assert.ok(page.includes(`\`${op.id}\``), op.id);
  assert.match(page, /`POST \/waves\/v1\/tts` \| partly served: /);
  assert.match(page, /`POST \/waves\/v1\/chat\/completions` \| chat completions \(Electron\) \| not served \|/);
});
