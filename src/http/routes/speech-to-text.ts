/**
 * POST /api/v1/speech-to-text: the service's first transcription endpoint, which the official
 * Python SDK 4.x `transcribe` still calls. The audio is the form's `file` (the bytes say the
 * format, whatever the part's Content-Type), the options are form fields, the error body is the
 * transcription family's. The answer is the legacy transcription body, plus `text` and (with
 * word_timestamps) `word_timestamps`, the names the service's pages for this endpoint gave.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidRequestError } from '../../errors.js';
import type { Transcribe, TranscriptionOptions } from '../../transcription/types.js';
import { acceptFormData, type FormData } from '../plugins/form-data.js';
import { sttLanguages } from '../schemas/transcription-query.js';

export interface SpeechToTextRouteOptions {
  transcribe: Transcribe;
  maxUploadBytes: number;
}

/** The recogniser's name on this endpoint (the only value the 4.x SDK and the service took). */
const MODELS = ['lightning'] as const;
const FLAG_FIELDS = ['word_timestamps', 'age_detection', 'gender_detection', 'emotion_detection'] as const;
const TEXT_FIELDS = ['model', 'language', ...FLAG_FIELDS] as const;
/** Longest text field: the values are short names and true/false. */
const MAX_FIELD_BYTES = 64;

const FORM_REQUIRED = 'The request must be multipart/form-data with the audio in the field "file" and the field "model"';

function one(fields: Map<string, string[]>, name: string): string | undefined {
  const values = fields.get(name);
  if (values && values.length > 1) throw new InvalidRequestError(`${name} must be given once`);
  return values?.[0];
}

function flag(fields: Map<string, string[]>, name: (typeof FLAG_FIELDS)[number]): boolean {
  const value = one(fields, name);
  if (value !== undefined && value !== 'true' && value !== 'false') throw new InvalidRequestError(`${name} must be true or false`);
  return value === 'true';
}

/** The form's audio and options; every refusal names its field. */
function readForm(body: unknown): { bytes: Uint8Array; contentType: string; options: TranscriptionOptions } {
  const form = body as FormData | undefined;
  if (!form || !(form.fields instanceof Map)) throw new InvalidRequestError(FORM_REQUIRED);
  for (const name of form.fields.keys()) {
    if (!(TEXT_FIELDS as readonly string[]).includes(name)) throw new InvalidRequestError(`Unknown field "${name.slice(0, 50)}": the form takes file, ${TEXT_FIELDS.join(', ')}`);
  }
  if (form.file && form.file.field !== 'file') throw new InvalidRequestError(`Unexpected file field "${form.file.field.slice(0, 50)}": the audio goes in "file"`);
  if (!form.file) throw new InvalidRequestError('file is required: the audio to transcribe, as a file field');
  if (form.file.bytes.byteLength === 0) throw new InvalidRequestError('file is empty');
  const model = one(form.fields, 'model');
  if (model === undefined) throw new InvalidRequestError(`model is required: ${MODELS.join(', ')}`);
  if (!(MODELS as readonly string[]).includes(model)) throw new InvalidRequestError(`model must be one of ${MODELS.join(', ')}`);
  const language = one(form.fields, 'language') ?? 'en';
  if (!(sttLanguages as readonly string[]).includes(language)) throw new InvalidRequestError(`language must be one of ${sttLanguages.join(', ')}`);
  return {
    bytes: form.file.bytes,
    contentType: form.file.contentType,
    options: {
      language,
      wordTimestamps: flag(form.fields, 'word_timestamps'),
      diarize: false,
      ageDetection: flag(form.fields, 'age_detection'),
      genderDetection: flag(form.fields, 'gender_detection'),
      emotionDetection: flag(form.fields, 'emotion_detection'),
      filename: form.file.filename,
      // The service's rule: numbers as they were spoken.
      numerals: false,
    },
  };
}

export function speechToTextRoutes(options: SpeechToTextRouteOptions) {
  return async function register(app: FastifyInstance): Promise<void> {
    // Room for a few fields beyond the known ones, so that a client's extra field is refused by its name.
    acceptFormData(app, { maxFileBytes: options.maxUploadBytes, maxFields: TEXT_FIELDS.length + 4, maxFieldBytes: MAX_FIELD_BYTES });
    app.post('/', {
      config: { rateFamily: 'transcription' },
      schema: {
        tags: ['stt'],
        summary: 'Transcribe the form field "file" (multipart/form-data; fields model=lightning, language, word_timestamps, age_detection, gender_detection, emotion_detection)',
        consumes: ['multipart/form-data'],
      },
      handler: async (request) => {
        const { bytes, contentType, options: transcriptionOptions } = readForm(request.body);
        const result = await options.transcribe({ bytes, contentType }, transcriptionOptions, { requestId: request.id, signal: request.clientGone });
        return {
          status: 'success',
          ...result,
          text: result.transcription,
          ...(transcriptionOptions.wordTimestamps ? { word_timestamps: result.words.map(({ word, start, end }) => ({ word, start, end })) } : {}),
        };
      },
    });
  };
}
