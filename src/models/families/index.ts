/**
 * Every model family Parley knows, in the order their recognition is tried: the first family
 * whose detect() answers (a pack or a problem) owns the folder. A new family is one module
 * implementing ModelFamily, added here.
 */
import type { PackKind } from '../../engines/model-pack.js';
import { audioTagging } from './audio-tagging.js';
import type { ModelFamily } from './family.js';
import { kitten } from './kitten.js';
import { kokoro } from './kokoro.js';
import { matcha } from './matcha.js';
import { moonshine } from './moonshine.js';
import { nemo } from './nemo.js';
import { paraformer } from './paraformer.js';
import { piperVits } from './piper-vits.js';
import { punctuation } from './punctuation.js';
import { pocket } from './pocket.js';
import { segmentation } from './segmentation.js';
import { senseVoice } from './sense-voice.js';
import { sileroVad } from './silero-vad.js';
import { speakerEmbedding } from './speaker-embedding.js';
import { whisper } from './whisper.js';
import { zipformer } from './zipformer.js';
import { zipvoice } from './zipvoice.js';

export const MODEL_FAMILIES: readonly ModelFamily[] = [
  // Told apart by a file of their own, or (punctuation) by their release name.
  punctuation,
  audioTagging,
  sileroVad,
  whisper,
  moonshine,
  // Zero-shot TTS: by name, metadata or files of their own, before the encoder/decoder families.
  zipvoice,
  pocket,
  // Encoder/decoder/joiner: NeMo by name or metadata, the rest are icefall transducers.
  nemo,
  zipformer,
  kitten,
  kokoro,
  matcha,
  // One model with tokens.txt: by name or metadata, VITS last (an espeak-ng-data folder suffices).
  senseVoice,
  paraformer,
  piperVits,
  // One model without tokens.
  segmentation,
  speakerEmbedding,
];

const byKind = new Map<PackKind, ModelFamily>(MODEL_FAMILIES.flatMap((f) => f.kinds.map((k) => [k, f] as const)));

export function familyOf(kind: PackKind): ModelFamily {
  const family = byKind.get(kind);
  if (!family) throw new Error(`no model family handles packs of kind ${kind}`);
  return family;
}
