/** readFormData, the one multipart parser of every route that takes a form: its bounds and its refusals. */
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { InvalidRequestError, PayloadTooLargeError } from '../../../src/errors.js';
import { readFormData } from '../../../src/http/plugins/form-data.js';

const BOUNDARY = 'b0undary';
const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

function form(fields: Record<string, string>, file?: { name: string; bytes: Buffer }): Buffer {
  const parts = Object.entries(fields).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  const head = Buffer.from(parts.join(''));
  if (!file) return Buffer.concat([head, Buffer.from(`--${BOUNDARY}--\r\n`)]);
  const fileHead = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.name}"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
  return Buffer.concat([head, fileHead, file.bytes, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
}

const limits = { maxFileBytes: 1000, maxFields: 3, maxFieldBytes: 100 };

describe('readFormData', () => {
  it('gives the file and every value of each field', async () => {
    const parsed = await readFormData(headers, Readable.from([form({ model: 'm', 'g[]': 'word' }, { name: 'file', bytes: Buffer.alloc(10, 7) })]), limits);
    assert.equal(parsed.file?.field, 'file');
    assert.deepEqual([...parsed.file!.bytes], Array(10).fill(7));
    assert.deepEqual(parsed.fields.get('model'), ['m']);
  });

  it('refuses a file over its limit once the body is read, in the route family\'s words when it gives them', async () => {
    const big = form({ model: 'm' }, { name: 'file', bytes: Buffer.alloc(1001) });
    const body = Readable.from([big]);
    await assert.rejects(readFormData(headers, body, limits), (err: unknown) => err instanceof PayloadTooLargeError && /1000 bytes/.test(err.message));
    assert.ok(body.readableEnded, 'the body was read to its end, so the client gets the answer rather than a reset');
    const refusal = () => new InvalidRequestError('file is larger than the limit of 1000 bytes');
    await assert.rejects(readFormData(headers, Readable.from([big]), { ...limits, fileTooLarge: refusal }), (err: unknown) => err instanceof InvalidRequestError && /^file is larger/.test(err.message));
  });

  it('cuts a body far past what the form may hold without waiting for its end', async () => {
    const body = new PassThrough();
    const parsing = readFormData(headers, body, limits);
    const start = form({}, { name: 'file', bytes: Buffer.alloc(0) }).subarray(0, 120);
    body.write(start);
    // More than twice what the form may hold, and the body never ends.
    for (let i = 0; i < 200; i++) body.write(Buffer.alloc(1000));
    await assert.rejects(parsing, PayloadTooLargeError);
    body.destroy();
  });
});
