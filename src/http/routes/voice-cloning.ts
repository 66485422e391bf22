/**
 * POST <name>/add_voice under every name of the route table that clones, and on the current layout
 * POST /voice-cloning (the same form plus an optional `model`): multipart `displayName` + `file`
 * (and optional description, accent, tags, language, transcript) → a cloned voice. Thin: the
 * form, bounded while it is read (plugins/form-data.ts), becomes a CloneRequest.
 * Parley's neutral routes answer as soon as the clone is stored (`processing`); the product-named
 * ones and those under /waves/v1 answer once it can speak (`completed`), as the service does,
 * within cloning.readyTimeoutMs.
 */
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { InvalidRequestError } from '../../errors.js';
import { acceptFormData, type FormData } from '../plugins/form-data.js';
import type { ClonedVoiceRow } from '../../store/cloned-voice-repository.js';
import type { SynthesisService } from '../../synthesis/synthesize.js';
import type { CloneRequest, CloningModel, VoiceCloningService } from '../../synthesis/voice-cloning.js';
import { AddVoiceFields, AddVoiceResponse, type AddVoiceFieldValues } from '../schemas/add-voice.js';
import { speechErrorsOf } from '../schemas/common.js';
import { ClonedVoiceBody, cloneNamingOf, cloneToWire, type CloneNaming } from './cloned-voice-wire.js';
import { markDeprecated, speechRouteNamesFor, type RouteLayout } from './product-names.js';

export interface VoiceCloningRouteOptions {
  cloning: VoiceCloningService;
  /** Largest sample file (config cloning.maxSampleBytes). */
  maxSampleBytes: number;
  /** Longest wait for a clone to be ready on the routes that answer once it is (config cloning.readyTimeoutMs). */
  readyTimeoutMs: number;
  /** Speaks the sample clip those routes answer with; without it they answer no clips. */
  synthesis?: SynthesisService;
  layout?: RouteLayout;
  /** Where a deprecated name's Deprecation Link header points. */
  successorDocsUrl?: string;
}

/** `model` values of POST /voice-cloning, as clients spell them: the product's cloning models, and the older one. */
const CLONING_MODELS: Readonly<Record<string, CloningModel>> = {
  'lightning-v3.1': 'tts-v3.1',
  'lightning_v3.1': 'tts-v3.1',
  'lightning-v3.1-pro': 'tts-v3.1-pro',
  'lightning_v3.1_pro': 'tts-v3.1-pro',
  'lightning-large': 'tts-large',
};
const DEFAULT_CLONING_MODEL = 'lightning-v3.1';

/** What the sample clip of a new clone says. */
const SAMPLE_CLIP_TEXT = 'Hello! This is a sample of what I sound like.';

/** The answer of a route that waits for the clone: its whole record, as the clone routes list it, and a clip of it speaking. */
const CreatedCloneResponse = Type.Object({
  message: Type.String(),
  data: Type.Composite([
    ClonedVoiceBody,
    Type.Object({
      /** The new voice speaking: mp3 as a data: URL, so a client plays it without a second request or a credential. */
      samples: Type.Array(Type.Object({ text: Type.String(), audioUrl: Type.String() })),
    }),
  ]),
});

const FORM_REQUIRED = 'add_voice takes multipart/form-data with the fields displayName and file';

/** Longest text field: room for the longest the schema allows (transcript, 5000 characters of UTF-8). */
const MAX_FIELD_BYTES = 64 * 1024;

const describeBytes = (bytes: number) => (bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MB` : `${bytes} bytes`);

interface ReceivedForm {
  fields: Record<string, string>;
  file?: { bytes: Uint8Array; contentType: string; filename: string };
}

/** The form's parts as a clone takes them: the sample in the part named file, each text field once. */
function receivedForm(form: FormData): ReceivedForm {
  if (form.file && form.file.field !== 'file') throw new InvalidRequestError(`Unexpected file part "${form.file.field}": the sample goes in the part named file`);
  const received: ReceivedForm = { fields: {} };
  for (const [name, values] of form.fields) {
    if (name === 'file') throw new InvalidRequestError('file must be sent as a file part (with a filename), not as text');
    if (values.length > 1) throw new InvalidRequestError(`${name} is sent twice`);
    // defineProperty: a field named like "__proto__" stays an ordinary field, and is refused as unknown.
    Object.defineProperty(received.fields, name, { value: values[0]!, enumerable: true, writable: true, configurable: true });
  }
  if (form.file) received.file = { bytes: form.file.bytes, contentType: form.file.contentType, filename: form.file.filename };
  return received;
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

  /**
   * One clone from the form; `modelOf` picks the model, given the form's fields (and may take one
   * out). A route of the product naming answers once the clone can speak, with its whole record.
   */
  async function addVoice(request: FastifyRequest, modelOf: (fields: Record<string, string>) => CloningModel, naming: CloneNaming) {
    if (!request.body || !((request.body as FormData).fields instanceof Map)) throw new InvalidRequestError(FORM_REQUIRED);
    const form = receivedForm(request.body as FormData);
    const model = modelOf(form.fields);
    // The service's sentence opens the product naming's refusal; Parley's own routes keep theirs.
    if (!form.file) throw new InvalidRequestError(`${naming === 'product' ? 'No file provided' : 'file is required'}: send the voice sample as the multipart file part named file`);
    const fields = checkFields(form.fields);
    const clone: CloneRequest = {
      accountId: request.accountId,
      model,
      displayName: fields.displayName,
      file: form.file,
      description: fields.description,
      accent: fields.accent,
      tags: (fields.tags ?? '').split(',').map((t) => t.trim()).filter(Boolean),
      language: fields.language,
      transcript: fields.transcript,
    };
    const message = 'Voice clone created successfully';
    if (naming === 'product') {
      const row = await options.cloning.createReady(clone, options.readyTimeoutMs, request.clientGone);
      return { message, data: { ...cloneToWire(row, naming), samples: await sampleClips(request, row) } };
    }
    const row = await options.cloning.create(clone, request.clientGone);
    return { message, data: { voiceId: row.id, displayName: row.display_name, model: row.model, status: row.status, language: row.language ?? 'en', createdAt: row.created_at } };
  }

  /** The new clone saying SAMPLE_CLIP_TEXT; none when it cannot (the clone itself is made, so that is logged, not answered). */
  async function sampleClips(request: FastifyRequest, row: ClonedVoiceRow): Promise<{ text: string; audioUrl: string }[]> {
    if (!options.synthesis) return [];
    try {
      const prepared = await options.synthesis.prepare({
        accountId: row.account_id,
        model: 'tts-v3.1',
        text: SAMPLE_CLIP_TEXT,
        voiceId: row.id,
        sampleRate: 24_000,
        speed: 1,
        language: 'auto',
        outputFormat: 'mp3',
        pronunciationDicts: [],
      });
      const clip = await options.synthesis.wholeFile(prepared, { wavHeader: true }, request.clientGone);
      return [{ text: SAMPLE_CLIP_TEXT, audioUrl: `data:${clip.contentType};base64,${Buffer.from(clip.bytes).toString('base64')}` }];
    } catch (err) {
      if (request.clientGone.aborted) throw err;
      request.log.error({ err, voiceId: row.id }, 'the sample clip of a new voice clone could not be spoken');
      return [];
    }
  }

  const createdResponse = (naming: CloneNaming) => (naming === 'product' ? CreatedCloneResponse : AddVoiceResponse);

  /** The optional `model` field of POST /voice-cloning, taken out of the fields the clone is made of. */
  function cloningModel(fields: Record<string, string>): CloningModel {
    const value = fields.model ?? DEFAULT_CLONING_MODEL;
    delete fields.model;
    if (value === 'lightning-v2' || value === 'lightning_v2') throw new InvalidRequestError('Voice cloning for lightning-v2 is deprecated. Please use lightning-v3.1');
    const model = Object.hasOwn(CLONING_MODELS, value) ? CLONING_MODELS[value] : undefined;
    if (!model) throw new InvalidRequestError(`model must be one of ${Object.keys(CLONING_MODELS).join(', ')}`);
    return model;
  }

  return async function register(app: FastifyInstance): Promise<void> {
    acceptFormData(app, {
      maxFileBytes: options.maxSampleBytes,
      // The schema's fields, and the `model` of POST /voice-cloning.
      maxFields: Object.keys(AddVoiceFields.properties).length + 1,
      maxFieldBytes: MAX_FIELD_BYTES,
      fileTooLarge: () => new InvalidRequestError(`file is larger than the limit of ${describeBytes(options.maxSampleBytes)}`),
    });
    // Anything but a form is refused before its body is parsed.
    const formOnly = async (request: FastifyRequest) => {
      if (!/^multipart\/form-data\b/i.test(String(request.headers['content-type'] ?? ''))) {
        throw new InvalidRequestError(FORM_REQUIRED);
      }
    };
    const fieldsSummary = `multipart: displayName, file ≤ ${describeBytes(options.maxSampleBytes)}; optional description, accent, tags, language, transcript`;
    for (const { path, model, deprecated } of speechRouteNamesFor('add_voice')) {
      // The table gives add_voice to cloning models only; this narrows the type.
      if (model === 'tts-v2') continue;
      const naming = cloneNamingOf(options.layout, path);
      app.post(`/${path}/add_voice`, {
        config: { rateFamily: 'synthesis' },
        onRequest: deprecated ? [deprecation, formOnly] : formOnly,
        schema: {
          tags: [path],
          summary: `Clone a voice from a sample of speech (${fieldsSummary})`,
          deprecated,
          consumes: ['multipart/form-data'],
          response: { 200: createdResponse(naming), ...errors },
        },
        handler: (request) => addVoice(request, () => model, naming),
      });
    }
    if (options.layout !== 'current') return;
    // The service's clients call it with and without the trailing slash.
    for (const path of ['/voice-cloning', '/voice-cloning/']) {
      app.post(path, {
        config: { rateFamily: 'synthesis' },
        onRequest: formOnly,
        schema: {
          tags: ['voice-cloning'],
          summary: `Clone a voice, answering once it can speak (${fieldsSummary}; model: lightning-v3.1 by default, or lightning-v3.1-pro)`,
          consumes: ['multipart/form-data'],
          response: { 200: CreatedCloneResponse, ...errors },
        },
        handler: (request) => addVoice(request, cloningModel, 'product'),
      });
    }
  };
}
