import { Type, type StringOptions, type TLiteral, type TUnion } from '@sinclair/typebox';

/**
 * A string from a fixed set, as `{type: "string", enum: [...]}` so a 400 says "must be one of …",
 * typed as the union of its literals so a route reads the value as that union. (Type.Union of
 * literals would validate as anyOf, with a vaguer message; Type.Unsafe loses its type in the
 * Fastify type provider.)
 */
export function StringEnum<const T extends string>(values: readonly T[], options: StringOptions = {}): TUnion<TLiteral<T>[]> {
  return Type.String({ ...options, enum: [...values] }) as never;
}

/**
 * Ids a client sends back to us. Bounded so that an oversized one is a 400 naming the field, never
 * a database lookup of a megabyte string.
 */
export const MAX_VOICE_ID_CHARS = 256;
export const MAX_DICT_ID_CHARS = 64;
/** Request ids are at most 128 characters (longer ones are refused, never truncated). */
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

/** The error responses of a route, all with the body schema `id`. */
const errorResponses = (id: string) => ({
  400: Type.Ref(id),
  401: Type.Ref(id),
  404: Type.Ref(id),
  413: Type.Ref(id),
  429: Type.Ref(id),
  500: Type.Ref(id),
  503: Type.Ref(id),
});

export const speechErrors = errorResponses('SpeechError');

export const WavesErrorBody = Type.Object(
  {
    status: Type.Literal('error'),
    error: Type.String(),
    message: Type.String(),
    request_id: Type.String(),
    /** A failed voice clone's cause (voice_clone_error, voice_clone_timeout), or LANGUAGE_NOT_INSTALLED. */
    error_code: Type.Optional(Type.String()),
    /** With LANGUAGE_NOT_INSTALLED: the requested language, and the catalogue pack that serves it when one does. */
    language: Type.Optional(Type.String()),
    pack: Type.Optional(Type.String()),
  },
  { $id: 'WavesError', description: 'Error body of every route under /waves/v1' },
);

export const wavesErrors = errorResponses('WavesError');

/** The error responses of a speech route on a layout: the legacy layout's speech bodies, or the current one's. */
export function speechErrorsOf(layout: 'legacy' | 'current' | undefined) {
  return layout === 'current' ? wavesErrors : speechErrors;
}
