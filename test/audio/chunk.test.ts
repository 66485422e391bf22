import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteChunker } from '../../src/audio/chunk.js';

test('ByteChunker emits full 1024-byte chunks, loses nothing, flushes the rest', () => {
  let seed = 42;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  const chunker = new ByteChunker();
  const input: number[] = [];
  const output: number[] = [];
  let counter = 0;
  for (let round = 0; round < 300; round++) {
    const size = [0, 1, 1023, 1024, 1025, 2048, 5000][random(7)] + random(3);
    const bytes = Uint8Array.from({ length: size }, () => counter++ & 0xff);
    input.push(...bytes);
    const chunks = chunker.push(bytes);
    bytes.fill(0); // the caller may reuse its buffer: emitted chunks must not change
    for (const chunk of chunks) {
      assert.equal(chunk.length, 1024);
      output.push(...chunk);
    }
  }
  const rest = chunker.flush();
  if (rest) {
    assert.ok(rest.length > 0 && rest.length < 1024);
    output.push(...rest);
  }
  assert.deepEqual(output, input);
  assert.equal(chunker.flush(), null);
});

test('ByteChunker with a custom size and an exact multiple leaves nothing to flush', () => {
  const chunker = new ByteChunker(10);
  const chunks = [...chunker.push(new Uint8Array(7)), ...chunker.push(new Uint8Array(13))];
  assert.deepEqual(chunks.map((c) => c.length), [10, 10]);
  assert.equal(chunker.flush(), null);
  assert.throws(() => new ByteChunker(0), RangeError);
});
