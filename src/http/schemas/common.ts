import { Type } from '@sinclair/typebox';

/**
 * Ids a client sends back to us. Bounded so that an oversized one is a 400 naming the field, never
 * a database lookup of a megabyte string.
 */
export const MAX_VOICE_ID_CHARS = 256;
export const MAX_DICT_ID_CHARS = 64;
/** decisions.md point 1: request ids are at most 128 characters. */
export const MAX_REQUEST_ID_CHARS = 128;

export const VoiceId = Type.String({ minLength: 1, maxLength: MAX_VOICE_ID_CHARS });
export const DictId = Type.String({ minLength: 1, maxLength: MAX_DICT_ID_CHARS });

export const SpeechErrorBody = Type.Object(
  { error: Type.String(), message: Type.String() },
  { $id: 'SpeechError', description: 'Error body of synthesis, voice and dictionary routes' },
);

export const SttErrorBody = Type.Object(
  { error: Type.String(), request_id: Type.String() },
  { $id: 'SttError', description: 'Error body of transcription routes' },
);

export const speechErrors = {
  400: Type.Ref('SpeechError'),
  401: Type.Ref('SpeechError'),
  404: Type.Ref('SpeechError'),
  429: Type.Ref('SpeechError'),
  500: Type.Ref('SpeechError'),
};
