/**
 * Form fields of POST /v1/audio/transcriptions and /translations (multipart, OpenAI's API) and
 * the verbose_json answer. Multipart fields arrive as strings and are checked by the route
 * (src/http/routes/openai/transcriptions.ts), which names the field in each 400.
 */
import { Type, type Static } from '@sinclair/typebox';

export const transcriptionFormats = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptionFormat = (typeof transcriptionFormats)[number];
export const timestampGranularities = ['word', 'segment'] as const;

/** Text fields a form may carry; any other field is a 400 naming it. */
export const transcriptionFields = [
  'model', 'language', 'prompt', 'response_format', 'temperature', 'stream', 'timestamp_granularities[]', 'timestamp_granularities',
  'chunking_strategy', 'include[]', 'include',
  // Parley's additions: speaker labels and the analysis fields of its own API.
  'diarize', 'age_detection', 'gender_detection', 'emotion_detection',
] as const;

/** Longest text field (prompt): a bound on what one field may hold in memory. */
export const MAX_FIELD_BYTES = 16 * 1024;

/** OpenAI's usage of a model billed by audio duration: the input's length in seconds. */
export const TranscriptionUsage = Type.Object({ type: Type.Literal('duration'), seconds: Type.Number() });
export type TranscriptionUsageBody = Static<typeof TranscriptionUsage>;

export const VerboseTranscription = Type.Object({
  task: Type.String({ enum: ['transcribe', 'translate'] }),
  language: Type.String({ description: "The language's English name in lower case, as OpenAI gives it (english)" }),
  duration: Type.Number(),
  text: Type.String(),
  segments: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.Integer(),
        seek: Type.Integer(),
        start: Type.Number(),
        end: Type.Number(),
        text: Type.String(),
        tokens: Type.Array(Type.Integer()),
        temperature: Type.Number(),
        avg_logprob: Type.Number(),
        compression_ratio: Type.Number(),
        no_speech_prob: Type.Number(),
        speaker: Type.String({ description: 'Parley: speaker label' }),
      }),
    ),
  ),
  words: Type.Optional(Type.Array(Type.Object({ word: Type.String(), start: Type.Number(), end: Type.Number(), speaker: Type.String() }))),
  parley: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Parley: speakers and analysis fields, when asked for' })),
  usage: Type.Optional(TranscriptionUsage),
});
export type VerboseTranscriptionBody = Static<typeof VerboseTranscription>;
