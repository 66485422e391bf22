import { Type } from '@sinclair/typebox';

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
