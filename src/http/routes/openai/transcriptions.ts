/**
 * POST /v1/audio/transcriptions and /v1/audio/translations: OpenAI's multipart transcription API on
 * Parley's transcription use case. The form is read with its bounds (one file of at most the
 * upload cap, few and short text fields) before anything runs; every field is checked here and
 * a 400 names it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../../../errors.js';
import { keywordsFromPrompt } from '../../../transcription/options/keywords.js';
import type { Transcribe, TranscriptionResult } from '../../../transcription/types.js';
import { acceptFormData, type FormData } from '../../plugins/form-data.js';
import { pipeToSse, sseEvent } from '../../plugins/sse.js';
import {
  MAX_FIELD_BYTES,
  timestampGranularities,
  transcriptionFields,
  transcriptionFormats,
  type TranscriptionFormat,
  type TranscriptionUsageBody,
  type VerboseTranscriptionBody,
} from '../../schemas/openai-transcription.js';
import { sttLanguages } from '../../schemas/transcription-query.js';
import { transcriptionModelAliases } from './aliases.js';
import { openAiErrorBody, ParamError } from './errors.js';

export interface TranscriptionRouteOptions {
  transcribe: Transcribe;
  maxUploadBytes: number;
  /** Ids of the loaded recogniser packs: accepted as `model` besides the aliases. */
  recognizerPacks(): string[];
  /** Languages the loaded recognisers take ("multi" when one detects): the default language comes from these. */
  recognizerLanguages(): string[];
  /** Throws PackNotInstalledError when a pack every transcription needs is missing (unset: nothing to check). */
  requirePacks?(language: string): void;
  writeStallTimeoutMs?: number;
}

interface TranscriptionForm {
  file: { bytes: Uint8Array; contentType: string; filename: string };
  model: string;
  language?: string;
  prompt?: string;
  responseFormat: TranscriptionFormat;
  granularities: Set<string>;
  stream: boolean;
  diarize: boolean;
  ageDetection: boolean;
  genderDetection: boolean;
  emotionDetection: boolean;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });

function flag(fields: Map<string, string[]>, name: string): boolean {
  const v = fields.get(name)?.[0];
  if (v === undefined) return false;
  if (v !== 'true' && v !== 'false') throw new ParamError(`${name} must be true or false`, name);
  return v === 'true';
}

function one(fields: Map<string, string[]>, name: string): string | undefined {
  const values = fields.get(name);
  if (!values) return undefined;
  if (values.length > 1) throw new ParamError(`${name} must be given once`, name);
  return values[0];
}

/** Checks the form (already read within its bounds by acceptFormData); every 400 names its field. */
function checkForm(request: FastifyRequest, options: TranscriptionRouteOptions): TranscriptionForm {
  const form = request.body as FormData | undefined;
  if (!form || !(form.fields instanceof Map)) throw new InvalidRequestError('The request must be multipart/form-data with the audio in the field "file"');
  const fields = new Map<string, string[]>();
  for (const [name, values] of form.fields) {
    if (!(transcriptionFields as readonly string[]).includes(name)) throw new ParamError(`Unknown field "${name}"`, name);
    const bare = name.replace(/\[\]$/, '');
    fields.set(bare, [...(fields.get(bare) ?? []), ...values]);
  }
  if (form.file && form.file.field !== 'file') throw new ParamError(`Unexpected file field "${form.file.field}": the audio goes in "file"`, form.file.field);
  const file = form.file;
  if (!file) throw new ParamError('file is required: the audio to transcribe, as a file field', 'file');
  if (file.bytes.byteLength === 0) throw new ParamError('file is empty', 'file');

  const model = one(fields, 'model');
  if (!model) throw new ParamError('model is required (whisper-1, gpt-4o-transcribe, gpt-4o-mini-transcribe, or a recogniser pack id)', 'model');
  if (!(transcriptionModelAliases as readonly string[]).includes(model) && !options.recognizerPacks().includes(model)) {
    throw new ParamError(`The model "${model}" is not a transcription model: use whisper-1 or an installed recogniser (GET /v1/models)`, 'model', 'model_not_found');
  }
  const language = one(fields, 'language');
  if (language !== undefined && !(sttLanguages as readonly string[]).includes(language)) {
    throw new ParamError(`language must be an ISO 639-1 code Parley transcribes: ${sttLanguages.join(', ')}`, 'language');
  }
  const responseFormat = (one(fields, 'response_format') ?? 'json') as TranscriptionFormat;
  if (!transcriptionFormats.includes(responseFormat)) throw new ParamError(`response_format must be one of ${transcriptionFormats.join(', ')}`, 'response_format');
  const granularities = new Set(fields.get('timestamp_granularities') ?? []);
  for (const g of granularities) {
    if (!(timestampGranularities as readonly string[]).includes(g)) throw new ParamError(`timestamp_granularities[] must be word and/or segment`, 'timestamp_granularities[]');
  }
  if (granularities.size && responseFormat !== 'verbose_json') {
    throw new ParamError('timestamp_granularities[] needs response_format verbose_json', 'timestamp_granularities[]');
  }
  const temperature = one(fields, 'temperature');
  if (temperature !== undefined && !(Number(temperature) >= 0 && Number(temperature) <= 1)) throw new ParamError('temperature must be between 0 and 1', 'temperature');
  return {
    file: { bytes: file.bytes, contentType: file.contentType, filename: file.filename },
    model,
    language,
    prompt: one(fields, 'prompt'),
    responseFormat,
    granularities,
    stream: flag(fields, 'stream'),
    diarize: flag(fields, 'diarize'),
    ageDetection: flag(fields, 'age_detection'),
    genderDetection: flag(fields, 'gender_detection'),
    emotionDetection: flag(fields, 'emotion_detection'),
  };
}

/** "00:01:02,345" (srt) or "00:01:02.345" (vtt). */
export function subtitleTime(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function subtitles(result: TranscriptionResult, format: 'srt' | 'vtt'): string {
  const cues = result.utterances.map((u, i) => {
    const times = `${subtitleTime(u.start, format === 'srt' ? ',' : '.')} --> ${subtitleTime(u.end, format === 'srt' ? ',' : '.')}`;
    return format === 'srt' ? `${i + 1}\n${times}\n${u.text}\n` : `${times}\n${u.text}\n`;
  });
  return (format === 'vtt' ? 'WEBVTT\n\n' : '') + cues.join('\n');
}

function languageName(code: string): string {
  try {
    return (languageNames.of(code) ?? code).toLowerCase();
  } catch {
    return code;
  }
}

function usage(result: TranscriptionResult): TranscriptionUsageBody {
  return { type: 'duration', seconds: Math.round(result.duration * 1000) / 1000 };
}

function verbose(result: TranscriptionResult, form: TranscriptionForm): VerboseTranscriptionBody {
  // Segments unless only words were asked for (OpenAI's default granularity is segment).
  const withSegments = form.granularities.size === 0 || form.granularities.has('segment');
  const body: VerboseTranscriptionBody = { task: 'transcribe', language: languageName(result.language), duration: result.duration, text: result.transcription };
  if (withSegments) {
    body.segments = result.utterances.map((u, id) => ({
      id,
      seek: 0,
      start: u.start,
      end: u.end,
      text: u.text,
      // Parley's recognisers expose neither Whisper's token ids nor its confidence measures.
      tokens: [],
      temperature: 0,
      avg_logprob: 0,
      compression_ratio: 0,
      no_speech_prob: 0,
      speaker: String(u.speaker), // a speaker_<n> label: this route asks for the seed's fields
    }));
  }
  if (form.granularities.has('word')) body.words = result.words.map((w) => ({ word: w.word, start: w.start, end: w.end, speaker: String(w.speaker) }));
  const parley: Record<string, unknown> = {};
  for (const key of ['age', 'gender', 'emotions', 'speakers'] as const) if (result[key] !== undefined) parley[key] = result[key];
  if (result.metadata.analyzers) parley.analyzers = result.metadata.analyzers;
  if (Object.keys(parley).length) body.parley = parley;
  body.usage = usage(result);
  return body;
}

/** The language of a request that names none, from the loaded recognisers' languages ("multi" when one detects). */
export function defaultTranscriptionLanguage(languages: string[]): string {
  return languages.includes('multi') ? 'multi' : languages.includes('en') ? 'en' : (languages[0] ?? 'en');
}

export function openAiTranscriptionRoutes(options: TranscriptionRouteOptions) {
  const defaultLanguage = () => defaultTranscriptionLanguage(options.recognizerLanguages());

  async function transcriptions(request: FastifyRequest, reply: FastifyReply) {
    const form = checkForm(request, options);
    const language = form.language ?? defaultLanguage();
    options.requirePacks?.(language);
    // `temperature` is accepted and unused. The words of `prompt` (names, jargon to expect) are
    // boosted as keywords where the recogniser can; the others ignore them.
    const keywords = form.prompt ? keywordsFromPrompt(form.prompt) : [];
    const result = await options.transcribe(
      { bytes: form.file.bytes, contentType: form.file.contentType },
      {
        language,
        // Subtitles and segments need the utterances, which come with word timestamps.
        wordTimestamps: true,
        diarize: form.diarize,
        ageDetection: form.ageDetection,
        genderDetection: form.genderDetection,
        emotionDetection: form.emotionDetection,
        filename: form.file.filename,
        ...(keywords.length ? { keywords } : {}),
      },
      { requestId: request.id, signal: request.clientGone },
    );
    if (form.stream) {
      // Recognition is not incremental in Parley: the deltas (one per utterance) follow the whole transcription.
      const event = (data: { type: string; [field: string]: unknown }) => sseEvent(data.type, data);
      async function* deltas() {
        for (const [i, u] of result.utterances.entries()) yield (i ? ' ' : '') + u.text;
      }
      await pipeToSse(request, reply, deltas(), {
        stallTimeoutMs: options.writeStallTimeoutMs,
        what: 'transcription stream',
        events: (delta) => [event({ type: 'transcript.text.delta', delta })],
        end: () => [event({ type: 'transcript.text.done', text: result.transcription })],
        // The transcript is whole before the first event: nothing can fail once the stream is open.
        error: () => event({ type: 'error', ...openAiErrorBody(null).body }),
      });
      return reply;
    }
    switch (form.responseFormat) {
      case 'text':
        return reply.type('text/plain; charset=utf-8').send(`${result.transcription}\n`);
      case 'srt':
        return reply.type('application/x-subrip; charset=utf-8').send(subtitles(result, 'srt'));
      case 'vtt':
        return reply.type('text/vtt; charset=utf-8').send(subtitles(result, 'vtt'));
      case 'verbose_json':
        return verbose(result, form);
      default:
        return { text: result.transcription, usage: usage(result) };
    }
  }

  async function translations(request: FastifyRequest) {
    checkForm(request, options);
    // The recogniser interface has no translate task (Whisper's): no installed pack can do it.
    throw new ParamError(
      'Translation to English is not available: none of the installed recognisers can translate (Parley runs no Whisper translate task); ' +
        'use /v1/audio/transcriptions for a transcript in the spoken language',
      'model',
      'translation_unavailable',
    );
  }

  return async function register(app: FastifyInstance): Promise<void> {
    acceptFormData(app, { maxFileBytes: options.maxUploadBytes, maxFields: transcriptionFields.length, maxFieldBytes: MAX_FIELD_BYTES });
    const common = { config: { rateFamily: 'transcription' as const } };
    app.post('/audio/transcriptions', {
      ...common,
      schema: {
        tags: ['openai'],
        summary: "Transcribe an uploaded file, OpenAI's API (multipart: file, model, language, response_format, timestamp_granularities[], stream)",
        consumes: ['multipart/form-data'],
        produces: ['application/json', 'text/plain', 'application/x-subrip', 'text/vtt', 'text/event-stream'],
      },
      handler: transcriptions,
    });
    app.post('/audio/translations', {
      ...common,
      schema: { tags: ['openai'], summary: 'Translate speech to English: 400 while no installed recogniser translates', consumes: ['multipart/form-data'] },
      handler: translations,
    });
  };
}
