/**
 * The voice catalogue: every voice of every loaded TTS engine, by model generation.
 * Engines are swapped as a whole when packs are reloaded, so a lookup never sees half a reload.
 */
import type { ModelGeneration, TtsEngine, Voice } from '../engines/types.js';
import { baseLanguage } from './languages.js';

export interface ResolvedVoice {
  voice: Voice;
  engine: TtsEngine;
}

export class VoiceRegistry {
  private byId = new Map<string, ResolvedVoice>();
  /** Every voice by the primary subtag of each language it speaks, in catalogue order: a routed request looks here, not through every voice. */
  private byLanguage = new Map<string, ResolvedVoice[]>();
  private engines: TtsEngine[] = [];

  constructor(engines: TtsEngine[] = []) {
    this.setEngines(engines);
  }

  /** Replace the engines (start-up and pack reload). Earlier engines win on duplicate voice ids. */
  setEngines(engines: TtsEngine[]): void {
    const byId = new Map<string, ResolvedVoice>();
    for (const engine of engines) {
      for (const voice of engine.listVoices()) if (!byId.has(voice.id)) byId.set(voice.id, { voice, engine });
    }
    const byLanguage = new Map<string, ResolvedVoice[]>();
    for (const r of byId.values()) {
      for (const language of new Set(r.voice.languages.map(baseLanguage))) {
        const speakers = byLanguage.get(language);
        if (speakers) speakers.push(r);
        else byLanguage.set(language, [r]);
      }
    }
    this.engines = engines;
    this.byId = byId;
    this.byLanguage = byLanguage;
  }

  getEngines(): readonly TtsEngine[] {
    return this.engines;
  }

  list(model: ModelGeneration): Voice[] {
    return [...this.byId.values()].filter((r) => r.voice.models.includes(model)).map((r) => r.voice);
  }

  find(model: ModelGeneration, voiceId: string): ResolvedVoice | undefined {
    const r = this.byId.get(voiceId);
    return r && r.voice.models.includes(model) ? r : undefined;
  }

  /**
   * The voice of `model` that speaks `language` (an ISO 639-1 code) and is most like `like`:
   * `like` itself when it speaks it, else one of the same engine and gender, then of the same
   * engine, then of the same gender, else any (catalogue order breaks ties); undefined when none does.
   */
  speakerOf(model: ModelGeneration, language: string, like: Voice): ResolvedVoice | undefined {
    const speakers = this.byLanguage.get(language) ?? [];
    const own = this.byId.get(like.id);
    if (own && own.voice === like && own.voice.models.includes(model) && speakers.includes(own)) return own;
    const closeness = (v: Voice) => (v.engine === like.engine ? 2 : 0) + (v.gender === like.gender ? 1 : 0);
    let best: ResolvedVoice | undefined;
    for (const r of speakers) if (r.voice.models.includes(model) && (!best || closeness(r.voice) > closeness(best.voice))) best = r;
    return best;
  }
}
