/**
 * POST <name>/add_voice under every name of the route table that clones, and on the current layout
 * POST /voice-cloning (the same form plus an optional `model`): multipart `displayName` + `file`
 * (and optional description, accent, tags, language, transcript) → a cloned voice. Thin: the
 * form, bounded while it is read, becomes a CloneRequest.
 *
 * Not @fastify/multipart: it reads the raw request, beside the body-deadline stream that the
 * preParsing hook of plugins/connection-limits.ts puts in front of every body, and that stream,
 * never read, stopped the upload after its first 32 kB.
 */
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ModelGeneration } from '../../engines/types.js';
import { InvalidRequestError } from '../../errors.js';
import type { VoiceCloningService } from '../../synthesis/voice-cloning.js';
import { AddVoiceFields, AddVoiceResponse, type AddVoiceFieldValues } from '../schemas/add-voice.js';
import { speechErrorsOf } from '../schemas/common.js';
import { markDeprecated, speechRouteNamesFor, type RouteLayout } from './product-names.js';

export interface VoiceCloningRouteOptions {
  cloning: VoiceCloningService;
  /** Largest sample file (config cloning.maxSampleBytes). */
  maxSampleBytes: number;
  layout?: RouteLayout;
  /** Where a deprecated name's Deprecation Link header points. */
  successorDocsUrl?: string;
}

/** `model` values of POST /voice-cloning: the product's current cloning model, and the older ones. */
const CLONING_MODELS: Readonly<Record<string, ModelGeneration>> = {
  'lightning-v3.1': 'tts-v3.1',
  'lightning_v3.1': 'tts-v3.1',
  'lightning-large': 'tts-large',
};
const DEFAULT_CLONING_MODEL = 'lightning-v3.1';

/** Room for the text parts and multipart framing beside the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** A body this many times the limit is not drained to answer it: the connection is closed instead. */
const DRAIN_FACTOR = 2;

const describeBytes = (bytes: number) => (bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MB` : `${bytes} bytes`);

interface ReceivedForm {
  fields: Record<string, string>;
  file?: { bytes: Uint8Array; contentType: string; filename: string };
}

/**
 * The form's parts. The body arrived whole through Fastify's parser (so the body deadline and
 * the size cap applied while it was read); undici's FormData parser splits it.
 */
async function readForm(body: Buffer, contentType: string, maxSampleBytes: number): Promise<ReceivedForm> {
  let parsed: FormData;
  try {
    parsed = await new Response(new Uint8Array(body.buffer, body.byteOffset, body.byteLength) as Uint8Array<ArrayBuffer>, { headers: { 'content-type': contentType } }).formData();
  } catch (err) {
    throw new InvalidRequestError(`The multipart body is malformed: ${(err as Error).message}`);
  }
  const form: ReceivedForm = { fields: {} };
  for (const [name, value] of parsed) {
    if (typeof value !== 'string') {
      if (name !== 'file') throw new InvalidRequestError(`Unexpected file part "${name}": the sample goes in the part named file`);
      if (form.file) throw new InvalidRequestError('Send one file');
      if (value.size > maxSampleBytes) throw new InvalidRequestError(`file is larger than the limit of ${describeBytes(maxSampleBytes)}`);
      form.file = { bytes: new Uint8Array(await value.arrayBuffer()), contentType: value.type, filename: value.name };
    } else {
      if (name === 'file') throw new InvalidRequestError('file must be sent as a file part (with a filename), not as text');
      if (Object.hasOwn(form.fields, name)) throw new InvalidRequestError(`${name} is sent twice`);
      form.fields[name] = value;
    }
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
  if (!Object.hasOwn(AddVoiceFields.properties, name)) {
    throw new InvalidRequestError(`Unknown form field "${name}": the fields are file, ${Object.keys(AddVoiceFields.properties).join(', ')}`);
  }
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    throw new InvalidRequestError(`${name} must be ${schema.minLength ?? 0} to ${schema.maxLength ?? 'any number of'} characters`);
  }
  throw new InvalidRequestError(`${name}: ${error.message}`);
}

export function voiceCloningRoutes(options: VoiceCloningRouteOptions) {
  const errors = speechErrorsOf(options.layout);
  const deprecation = markDeprecated(options.successorDocsUrl);

  /** One clone from the form; `modelOf` picks the model, given the form's fields (and may take one out). */
  async function addVoice(request: FastifyRequest, modelOf: (fields: Record<string, string>) => ModelGeneration) {
    const form = await readForm(request.body as Buffer, String(request.headers['content-type']), options.maxSampleBytes);
    const model = modelOf(form.fields);
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
      request.clientGone,
    );
    return {
      message: 'Voice clone created successfully',
      data: { voiceId: row.id, displayName: row.display_name, model: row.model, status: row.status, language: row.language ?? 'en', createdAt: row.created_at },
    };
  }

  /** The optional `model` field of POST /voice-cloning, taken out of the fields the clone is made of. */
  function cloningModel(fields: Record<string, string>): ModelGeneration {
    const value = fields.model ?? DEFAULT_CLONING_MODEL;
    delete fields.model;
    if (value === 'lightning-v2' || value === 'lightning_v2') throw new InvalidRequestError('Voice cloning for lightning-v2 is deprecated. Please use lightning-v3.1');
    const model = Object.hasOwn(CLONING_MODELS, value) ? CLONING_MODELS[value] : undefined;
    if (!model) throw new InvalidRequestError(`model must be one of ${Object.keys(CLONING_MODELS).join(', ')}`);
    return model;
  }

  return async function register(app: FastifyInstance): Promise<void> {
    const maxBody = options.maxSampleBytes + FORM_OVERHEAD_BYTES;
    // Read as a whole (at most maxBody): an oversized body is read on to its end (up to
    // DRAIN_FACTOR times the cap) so the client, still sending, gets its 400 rather than a reset.
    app.addContentTypeParser('multipart/form-data', async (_request: FastifyRequest, payload: AsyncIterable<Buffer>) => {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of payload) {
        size += chunk.length;
        if (size > maxBody * DRAIN_FACTOR) break;
        if (size <= maxBody) chunks.push(chunk);
      }
      if (size > maxBody) throw new InvalidRequestError(`file is larger than the limit of ${describeBytes(options.maxSampleBytes)}`);
      return Buffer.concat(chunks, size);
    });
    // Anything but a form is refused before its body is parsed.
    const formOnly = async (request: FastifyRequest) => {
      if (!/^multipart\/form-data\b/i.test(String(request.headers['content-type'] ?? ''))) {
        throw new InvalidRequestError('add_voice takes multipart/form-data with the fields displayName and file');
      }
    };
    const fieldsSummary = `multipart: displayName, file ≤ ${describeBytes(options.maxSampleBytes)}; optional description, accent, tags, language, transcript`;
    for (const { path, model, deprecated } of speechRouteNamesFor('add_voice')) {
      app.post(`/${path}/add_voice`, {
        config: { rateFamily: 'synthesis' },
        bodyLimit: maxBody * DRAIN_FACTOR,
        onRequest: deprecated ? [deprecation, formOnly] : formOnly,
        schema: {
          tags: [path],
          summary: `Clone a voice from a sample of speech (${fieldsSummary})`,
          deprecated,
          consumes: ['multipart/form-data'],
          response: { 200: AddVoiceResponse, ...errors },
        },
        handler: (request) => addVoice(request, () => model),
      });
    }
    if (options.layout !== 'current') return;
    app.post('/voice-cloning', {
      config: { rateFamily: 'synthesis' },
      bodyLimit: maxBody * DRAIN_FACTOR,
      onRequest: formOnly,
      schema: {
        tags: ['voice-cloning'],
        summary: `Clone a voice (${fieldsSummary}; model: lightning-v3.1 by default)`,
        consumes: ['multipart/form-data'],
        response: { 200: AddVoiceResponse, ...errors },
      },
      handler: (request) => addVoice(request, cloningModel),
    });
  };
}
