/**
 * POST /api/v1/tts-large/add_voice and /tts-v3.1/add_voice: multipart `displayName` + `file`
 * (and optional description, accent, tags, language, transcript) → a cloned voice. Thin: the
 * multipart parts become a CloneRequest, with every part bounded while it is read.
 */
import multipart from '@fastify/multipart';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ModelGeneration } from '../../engines/types.js';
import { InvalidRequestError, ParleyError } from '../../errors.js';
import type { VoiceCloningService } from '../../synthesis/voice-cloning.js';
import { AddVoiceFields, AddVoiceResponse, type AddVoiceFieldValues } from '../schemas/add-voice.js';
import { speechErrors } from '../schemas/common.js';

export interface VoiceCloningRouteOptions {
  cloning: VoiceCloningService;
  /** Largest sample file (config cloning.maxSampleBytes). */
  maxSampleBytes: number;
}

/** Text parts are short; this bounds each one and the count of parts a client can send. */
const MAX_FIELD_BYTES = 16 * 1024;
const MAX_PARTS = 16;

const describeBytes = (bytes: number) => (bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MB` : `${bytes} bytes`);

interface ReceivedForm {
  fields: Record<string, string>;
  file?: { bytes: Uint8Array; contentType: string; filename: string };
}

async function readForm(request: FastifyRequest, maxSampleBytes: number): Promise<ReceivedForm> {
  const form: ReceivedForm = { fields: {} };
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw new InvalidRequestError(`Unexpected file part "${part.fieldname}": the sample goes in the part named file`);
        if (form.file) throw new InvalidRequestError('Send one file');
        const bytes = await part.toBuffer();
        form.file = { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), contentType: part.mimetype, filename: part.filename };
      } else {
        if (Object.hasOwn(form.fields, part.fieldname)) throw new InvalidRequestError(`${part.fieldname} is sent twice`);
        if (part.valueTruncated) throw new InvalidRequestError(`${part.fieldname} is longer than ${MAX_FIELD_BYTES} bytes`);
        form.fields[part.fieldname] = String(part.value);
      }
    }
  } catch (err) {
    if (err instanceof ParleyError) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new InvalidRequestError(`file is larger than the limit of ${describeBytes(maxSampleBytes)}`);
    if (code === 'FST_FILES_LIMIT') throw new InvalidRequestError('Send one file');
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') throw new InvalidRequestError(`The form has more than ${MAX_PARTS} parts`);
    if (code === 'FST_PROTO_VIOLATION') throw new InvalidRequestError('The form has a part named __proto__, constructor or prototype');
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== undefined && status < 500) throw new InvalidRequestError(`The multipart body is malformed: ${(err as Error).message}`);
    throw err;
  }
  return form;
}

/** One sentence naming the first field that breaks the schema. */
function checkFields(fields: Record<string, string>): AddVoiceFieldValues {
  if (fields.displayName === undefined) throw new InvalidRequestError('displayName is required');
  const error = Value.Errors(AddVoiceFields, fields).First();
  if (!error) return fields as AddVoiceFieldValues;
  const name = error.path.replace(/^\//, '');
  const schema = error.schema as { minLength?: number; maxLength?: number };
  if (name === 'language') throw new InvalidRequestError(`language must be one of ${AddVoiceFields.properties.language.anyOf.map((l) => l.const).join(', ')}`);
  if (!name) throw new InvalidRequestError(`Unknown form field: the fields are file, ${Object.keys(AddVoiceFields.properties).join(', ')}`);
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    throw new InvalidRequestError(`${name} must be ${schema.minLength ?? 0} to ${schema.maxLength ?? 'any number of'} characters`);
  }
  throw new InvalidRequestError(`${name}: ${error.message}`);
}

export function voiceCloningRoutes(options: VoiceCloningRouteOptions) {
  return async function register(app: FastifyInstance): Promise<void> {
    await app.register(multipart, {
      throwFileSizeLimit: true,
      limits: { fileSize: options.maxSampleBytes, files: 1, fieldSize: MAX_FIELD_BYTES, fields: MAX_PARTS, parts: MAX_PARTS, headerPairs: 64 },
    });
    for (const model of ['tts-large', 'tts-v3.1'] as ModelGeneration[]) {
      app.post(`/${model}/add_voice`, {
        config: { rateFamily: 'synthesis' },
        // Anything but a form is refused before its body is parsed.
        onRequest: async (request) => {
          if (!/^multipart\/form-data\b/i.test(String(request.headers['content-type'] ?? ''))) {
            throw new InvalidRequestError('add_voice takes multipart/form-data with the fields displayName and file');
          }
        },
        schema: {
          tags: [model],
          summary: `Clone a voice from a sample of speech (multipart: displayName, file ≤ ${describeBytes(options.maxSampleBytes)}; optional description, accent, tags, language, transcript)`,
          consumes: ['multipart/form-data'],
          response: { 200: AddVoiceResponse, ...speechErrors },
        },
        handler: async (request, reply) => {
          const abort = new AbortController();
          reply.raw.on('close', () => {
            if (!reply.raw.writableFinished) abort.abort();
          });
          const form = await readForm(request, options.maxSampleBytes);
          if (!form.file) throw new InvalidRequestError('file is required: send the voice sample as the multipart file part named file');
          const fields = checkFields(form.fields);
          const row = await options.cloning.create(
            {
              accountId: request.accountId,
              model,
              displayName: fields.displayName,
              file: form.file,
              description: fields.description,
              accent: fields.accent,
              tags: (fields.tags ?? '').split(',').map((t) => t.trim()).filter(Boolean),
              language: fields.language,
              transcript: fields.transcript,
            },
            abort.signal,
          );
          return {
            message: 'Voice clone created successfully',
            data: { voiceId: row.id, displayName: row.display_name, model: row.model, status: row.status, language: row.language ?? 'en', createdAt: row.created_at },
          };
        },
      });
    }
  };
}
