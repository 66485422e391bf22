/** docs/compatibility.md is the page the contract lists make: `npm run docs:compatibility` rewrites it. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { compatibilityPage, loadContracts, pagePath } from '../../scripts/compatibility-page.js';

it('docs/compatibility.md equals the page made from test/contract/waves-speech.json and waves-transcription.json (npm run docs:compatibility)', () => {
  assert.equal(readFileSync(pagePath, 'utf8'), compatibilityPage(loadContracts()));
});

it('the page names every operation with its status, and counts the items of every document', () => {
  const contracts = loadContracts();
  const page = compatibilityPage(contracts);
  for (const contract of Object.values(contracts)) {
    for (const op of [...contract.operations, ...contract.notOffered]) assert.ok(page.includes(`\`${op.id}\``), op.id);
    for (const document of contract.source.documents) assert.match(page, new RegExp(`\\| \`${document.split('/').at(-1)!.replaceAll('.', '\\.')}\` \\| \\d+ \\| \\d+ \\| \\d+ \\|`), document);
  }
  assert.match(page, /`POST \/waves\/v1\/tts` \| \d+ \| \d+ \| \d+ \| partly served: /);
  assert.match(page, /`WS \/waves\/v1\/stt\/live` \| \d+ \| \d+ \| \d+ \| partly served: /);
  assert.match(page, /`POST \/waves\/v1\/chat\/completions` \| chat completions \(Electron\) \| not served \|/);
});
