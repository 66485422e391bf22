/**
 * OpenAI's model and voice names → Parley's: `tts-1`, `tts-1-hd` and `gpt-4o-mini-tts` stand for
 * config.openai.speechModel; a model may also be a generation (tts-v2...) or a TTS pack id;
 * OpenAI's voice names map through config.openai.voices, and when the mapped voice is not one
 * of the model's, the model's first voice of the same gender speaks.
 */
import { openAiVoiceNames, type Config } from '../../../config.js';
import type { ModelGeneration, Voice } from '../../../engines/types.js';
import type { VoiceRegistry } from '../../../synthesis/voice-registry.js';
import { ParamError } from './errors.js';

export const speechModelAliases = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts'] as const;
export const transcriptionModelAliases = ['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe'] as const;
export const generations: readonly ModelGeneration[] = ['tts-v2', 'tts-v3.1', 'tts-large'];

type OpenAiVoiceName = (typeof openAiVoiceNames)[number];
/** As OpenAI presents its voices; the others are male. */
const femaleVoiceNames = new Set<OpenAiVoiceName>(['alloy', 'coral', 'nova', 'sage', 'shimmer', 'marin']);

export function isOpenAiVoiceName(name: string): name is OpenAiVoiceName {
  return (openAiVoiceNames as readonly string[]).includes(name);
}

export interface SpeechTarget {
  generation: ModelGeneration;
  voice: Voice;
}

export class SpeechModels {
  constructor(
    private readonly deps: {
      voices: VoiceRegistry;
      settings: Config['openai'];
      /** Ids of the loaded TTS packs. */
      ttsPacks(): string[];
    },
  ) {}

  /** Every voice a model (alias, generation or pack id) offers, or undefined for an unknown model. */
  voicesOf(model: string): Voice[] | undefined {
    const name = (speechModelAliases as readonly string[]).includes(model) ? this.deps.settings.speechModel : model;
    if ((generations as readonly string[]).includes(name)) return this.deps.voices.list(name as ModelGeneration);
    if (!this.deps.ttsPacks().includes(name)) return undefined;
    const seen = new Map<string, Voice>();
    for (const g of generations) for (const v of this.deps.voices.list(g)) if (v.id === name || v.id.startsWith(`${name}-`)) seen.set(v.id, v);
    return [...seen.values()];
  }

  resolve(model: string, voiceName: string): SpeechTarget {
    const voices = this.voicesOf(model);
    if (!voices) throw new ParamError(`The model "${model}" does not exist: see GET /v1/models`, 'model', 'model_not_found');
    if (voices.length === 0) throw new ParamError(`The model "${model}" has no voices installed`, 'model');
    const voice = this.pick(voices, voiceName);
    if (!voice) throw new ParamError(`The voice "${voiceName}" is not a voice of ${model}: see GET /v1/audio/voices?model=${encodeURIComponent(model)}`, 'voice');
    const generation = generations.find((g) => voice.models.includes(g))!;
    return { generation, voice };
  }

  /**
   * The generation a model (alias, generation or pack id) speaks with: what an account's clone
   * (`voice_…`, resolved by the synthesis use case for its owner only) is spoken through.
   */
  generationOf(model: string): ModelGeneration {
    const voices = this.voicesOf(model);
    if (!voices) throw new ParamError(`The model "${model}" does not exist: see GET /v1/models`, 'model', 'model_not_found');
    const name = (speechModelAliases as readonly string[]).includes(model) ? this.deps.settings.speechModel : model;
    if ((generations as readonly string[]).includes(name)) return name as ModelGeneration;
    return generations.find((g) => voices.some((v) => v.models.includes(g))) ?? this.generationOf(this.deps.settings.speechModel);
  }

  private pick(voices: Voice[], name: string): Voice | undefined {
    const exact = voices.find((v) => v.id === name);
    if (exact) return exact;
    const lower = name.toLowerCase();
    if (!isOpenAiVoiceName(lower)) return undefined;
    const mapped = this.deps.settings.voices[lower];
    const gender = femaleVoiceNames.has(lower) ? 'female' : 'male';
    return voices.find((v) => v.id === mapped) ?? voices.find((v) => v.gender === gender) ?? voices[0];
  }
}
