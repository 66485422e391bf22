/**
 * multipart/form-data as a parsed body, read with busboy from the stream the body deadline guards
 * (connection-limits.ts); every route that takes a form reads it here. @fastify/multipart reads
 * the raw request instead, past that guard, and stalls behind it. Bounds: one file of at most
 * `maxFileBytes` held in memory, a few short text fields; past any of them the request is refused
 * (413 or 400) and nothing else is kept. A file over its limit is read on to the end of the body,
 * discarded, so the client still sending gets its answer rather than a reset; a body past
 * DRAIN_FACTOR times what the form may hold is cut at once (the connection is then closed).
 */
import { Busboy } from '@fastify/busboy';
import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { InvalidRequestError, PayloadTooLargeError, type ParleyError } from '../../errors.js';

export interface FormFile {
  field: string;
  bytes: Uint8Array;
  filename: string;
  contentType: string;
}

export interface FormData {
  file: FormFile | undefined;
  /** Text fields by name; a name given several times (timestamp_granularities[]) keeps every value. */
  fields: Map<string, string[]>;
}

export interface FormLimits {
  maxFileBytes: number;
  maxFields: number;
  maxFieldBytes: number;
  /** The refusal of a file over maxFileBytes, in the route's words; by default a 413 naming the limit. */
  fileTooLarge?: () => ParleyError;
}

const DRAIN_FACTOR = 2;
/** Room for the multipart framing and part headers. */
const FRAMING_BYTES = 64 * 1024;

export function readFormData(headers: Record<string, string | string[] | undefined>, body: Readable, limits: FormLimits): Promise<FormData> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      body.unpipe();
      body.resume();
      reject(err);
    };
    const fileTooLarge = limits.fileTooLarge ?? (() => new PayloadTooLargeError(limits.maxFileBytes, `The file is larger than the limit of ${limits.maxFileBytes} bytes`));
    /** A file over its limit: answered once the body has been read. */
    let refusal: ParleyError | undefined;
    const drainBytes = DRAIN_FACTOR * (limits.maxFileBytes + limits.maxFields * limits.maxFieldBytes + FRAMING_BYTES);
    let received = 0;
    let parser;
    try {
      parser = Busboy({
        headers: headers as { 'content-type': string },
        limits: { fileSize: limits.maxFileBytes, files: 1, fields: limits.maxFields, fieldSize: limits.maxFieldBytes, parts: limits.maxFields + 1, headerPairs: 64 },
      });
    } catch {
      return reject(new InvalidRequestError('The multipart body has no boundary in its Content-Type'));
    }
    const form: FormData = { file: undefined, fields: new Map() };
    let reading: Promise<void> = Promise.resolve();
    parser.on('file', (field, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (!refusal) chunks.push(chunk);
      });
      // A form cut short errors on the file's own stream as well as on the parser.
      stream.on('error', () => fail(new InvalidRequestError('The multipart body is malformed')));
      stream.on('limit', () => {
        refusal ??= fileTooLarge();
        chunks.length = 0;
      });
      reading = new Promise((done) => stream.on('end', done)).then(() => {
        if (refusal) return;
        const bytes = Buffer.concat(chunks);
        form.file = { field, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), filename: filename || 'audio', contentType: mimeType };
      });
    });
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) return fail(new InvalidRequestError(`The field ${name} is longer than ${limits.maxFieldBytes} bytes`));
      form.fields.set(name, [...(form.fields.get(name) ?? []), value]);
    });
    parser.on('filesLimit', () => fail(new InvalidRequestError('The form may carry one file only')));
    parser.on('fieldsLimit', () => fail(new InvalidRequestError(`The form may carry at most ${limits.maxFields} fields`)));
    parser.on('partsLimit', () => fail(new InvalidRequestError(`The form may carry at most ${limits.maxFields + 1} parts`)));
    parser.on('error', () => fail(new InvalidRequestError('The multipart body is malformed')));
    parser.on('finish', () => {
      void reading.then(() => {
        if (refusal) return fail(refusal);
        if (settled) return;
        settled = true;
        resolve(form);
      });
    });
    body.on('error', fail);
    body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > drainBytes) fail(refusal ?? fileTooLarge());
    });
    body.pipe(parser);
  });
}

/** Parse multipart/form-data bodies of the routes in `app`'s scope into `FormData`. */
export function acceptFormData(app: FastifyInstance, limits: FormLimits): void {
  app.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    readFormData(request.headers, payload as Readable, limits).then((form) => done(null, form), (err: Error) => done(err, undefined));
  });
}
