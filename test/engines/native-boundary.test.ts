/**
 * sherpa-onnx-node is loaded in one place (src/engines/sherpa-onnx.ts), and only inference
 * processes and the pack test-load child call it: a module elsewhere that imports the package
 * would bring native code, and its crashes, back into the server's process.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/models.js';

const LOADER = 'src/engines/sherpa-onnx.ts';
/** This file names the package in its own examples below. */
const SELF = 'test/engines/native-boundary.test.ts';
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire(?:\.resolve)?\s*\(\s*)['"]sherpa-onnx-node(?:\/[^'"]*)?['"]/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return /\.(ts|mts|js|mjs|cjs)$/.test(name) ? [full] : [];
  });
}

describe('the native boundary', () => {
  it('sherpa-onnx-node is imported by the engines loader only', () => {
    const offenders = ['src', 'test', 'bench', 'scripts', 'bin']
      .flatMap((dir) => sources(path.join(repoRoot, dir)))
      .map((file) => path.relative(repoRoot, file))
      .filter((file) => file !== LOADER && file !== SELF && IMPORT.test(readFileSync(path.join(repoRoot, file), 'utf8')));
    assert.deepEqual(offenders, [], `import sherpa-onnx-node only through ${LOADER}`);
  });

  it('koffi (the FFI to sherpa-onnx C library) is imported by the per-stream hotwords binding only, inside inference/', () => {
    const binding = 'src/engines/inference/sherpa-stream-hotwords.ts';
    const koffi = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire(?:\.resolve)?\s*\(\s*)['"]koffi(?:\/[^'"]*)?['"]/;
    const importers = ['src', 'bench', 'scripts', 'bin']
      .flatMap((dir) => sources(path.join(repoRoot, dir)))
      .map((file) => path.relative(repoRoot, file))
      .filter((file) => koffi.test(readFileSync(path.join(repoRoot, file), 'utf8')));
    assert.deepEqual(importers, [binding]);
  });

  it('the check itself sees the ways a module can import it', () => {
    for (const line of [
      "import sherpa from 'sherpa-onnx-node';",
      'const s = require("sherpa-onnx-node");',
      "const m = await import('sherpa-onnx-node');",
      "require.resolve('sherpa-onnx-node/package.json')",
      "export { OfflineTts } from 'sherpa-onnx-node';",
    ]) {
      assert.ok(IMPORT.test(line), line);
    }
    assert.ok(!IMPORT.test("// the sherpa-onnx-node docs say so"));
    assert.ok(IMPORT.test(readFileSync(path.join(repoRoot, LOADER), 'utf8')), 'the loader itself imports it');
  });
});
