/**
 * Every engine built from the usable model packs, as one unit that a reload swaps in whole.
 *
 * Engines are shared between sets and reference-counted: a reload keeps the engine of every pack
 * whose revision did not change (nothing is loaded twice), builds engines for new or changed
 * packs, and an engine no set uses any more is closed only when the last request holding it ends
 * — however long that takes. Requests hold a set with retain()/release() (transcription) or one
 * engine with hold() (synthesis, through TtsEngine.hold).
 */
import { createAudioTagger } from './audio-tagging.js';
import { CAPABILITIES, type AnyEnginePack, type Capability, type EnginePack } from '../capabilities.js';
import { createDiarizer } from './sherpa-diarizer.js';
import { createOfflineRecognizer } from './sherpa-offline-recognizer.js';
import { createOnlineRecognizer } from './sherpa-online-recognizer.js';
import type { TaskRunner } from '../sherpa-tasks.js';
import { createPunctuator } from './sherpa-punctuation.js';
import { createSherpaTtsEngine, createZeroShotTtsEngine, type ZeroShotTts } from './sherpa-tts.js';
import { createSherpaVad } from './sherpa-vad.js';
import type { AudioTagger, Diarizer, Punctuator, Recognizer, StreamingVoiceActivityDetector, TtsEngine } from '../types.js';

export interface EngineSetOptions {
  /** Where each capability's models run (supervised inference processes in the server). */
  runners: { synthesis: TaskRunner; transcription: TaskRunner };
  diarizationThreshold: number;
}

interface Closeable {
  close(): Promise<void>;
}

/** One loaded engine and how many sets and requests hold it. */
class SharedEngine<T extends Closeable> {
  private refs = 1;
  /** What sets hand out: the engine, or a view of it that can hold() it. */
  exposed: T;

  constructor(
    readonly engine: T,
    /** The packs and revisions it was built from. */
    readonly identity: string,
  ) {
    this.exposed = engine;
  }

  retain(): void {
    this.refs++;
  }

  release(): void {
    if (--this.refs === 0) void this.engine.close().catch(() => undefined);
  }

  /** Keeps the engine open until the returned function is called. */
  hold(): () => void {
    this.retain();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release();
    };
  }
}

export class EngineSet {
  tts: TtsEngine[] = [];
  /** Zero-shot packs: no voices of their own; voice clones speak through them. */
  zeroShot: ZeroShotTts[] = [];
  vad?: StreamingVoiceActivityDetector;
  recognizers: Recognizer[] = [];
  diarizer?: Diarizer;
  audioTagging?: AudioTagger;
  /** The punctuation model `format=true` uses (the first offline pack, else the first online one). */
  punctuator?: Punctuator;
  /** Packs that passed verification but whose engine would not load. */
  readonly failed: Array<{ pack: string; reason: string }> = [];
  /** Pack ids whose engines this set took over unchanged from the previous one. */
  readonly kept: string[] = [];
  /** Pack ids whose engines this set loaded. */
  readonly loaded: string[] = [];
  private readonly shared = new Map<string, SharedEngine<Closeable>>();
  private refs = 1;

  /** The engine built from `identity` in this set, for the next set to keep. */
  find(identity: string): SharedEngine<Closeable> | undefined {
    return this.shared.get(identity);
  }

  add<T extends Closeable>(entry: SharedEngine<T>): T {
    this.shared.set(entry.identity, entry as SharedEngine<Closeable>);
    return entry.exposed;
  }

  /** A request starts using this set (release it when done). */
  retain(): this {
    this.refs++;
    return this;
  }

  /** A holder lets go; the last one releases every engine (closing those no other set holds). */
  release(): void {
    if (--this.refs > 0) return;
    for (const entry of this.shared.values()) entry.release();
    this.shared.clear();
  }

  /** Identities of the engines (for tests and reports). */
  get identities(): string[] {
    return [...this.shared.keys()];
  }
}

const identityOf = (packs: EnginePack[]) => packs.map((p) => `${p.id}@${p.revision ?? ''}`).join('+');

/** The packs of each capability, in the order given. */
type PacksByCapability = { [C in Capability]: EnginePack<C>[] };

/** Builds one engine from packs, taking it over from the previous set when they are unchanged. */
type Use = <T extends Closeable>(from: EnginePack[], build: () => Promise<T> | T, expose?: (engine: T, entry: SharedEngine<T>) => T) => Promise<T | undefined>;

interface LoadContext {
  set: EngineSet;
  use: Use;
  options: EngineSetOptions;
  packs: PacksByCapability;
}

/**
 * How each capability's packs become engines of the set; the compiler checks every capability
 * has an entry. A capability loaded with another one (speaker embeddings with segmentation) has an
 * entry that does nothing.
 */
const LOADERS: { [C in Capability]: (packs: EnginePack<C>[], context: LoadContext) => Promise<void> } = {
  async tts(packs, { set, use, options }) {
    for (const pack of packs) {
      const engine = await use(
        [pack],
        () => createSherpaTtsEngine(options.runners.synthesis, [pack]),
        (tts, entry): TtsEngine => ({
          name: tts.name,
          listVoices: () => tts.listVoices(),
          synthesize: (voice, text, o) => tts.synthesize(voice, text, o),
          close: () => tts.close(),
          hold: () => entry.hold(),
        }),
      );
      if (engine) set.tts.push(engine);
    }
  },
  async 'zero-shot-tts'(packs, { set, use, options }) {
    for (const pack of packs) {
      const engine = await use(
        [pack],
        () => createZeroShotTtsEngine(options.runners.synthesis, pack),
        (tts, entry): ZeroShotTts => ({
          name: tts.name,
          packId: tts.packId,
          languages: tts.languages,
          sampleRate: tts.sampleRate,
          needsReferenceText: tts.needsReferenceText,
          synthesize: (reference, text, o) => tts.synthesize(reference, text, o),
          close: () => tts.close(),
          hold: () => entry.hold(),
        }),
      );
      if (engine) set.zeroShot.push(engine);
    }
  },
  async vad([vad], { set, use, options }) {
    if (vad) set.vad = await use([vad], () => createSherpaVad(options.runners.transcription, vad));
  },
  async 'offline-asr'(packs, { set, use, options }) {
    for (const pack of packs) {
      const recognizer = await use([pack], () => createOfflineRecognizer(options.runners.transcription, pack));
      if (recognizer) set.recognizers.push(recognizer);
    }
  },
  async 'online-asr'(packs, { set, use, options }) {
    for (const pack of packs) {
      const recognizer = await use([pack], () => createOnlineRecognizer(options.runners.transcription, pack));
      if (recognizer) set.recognizers.push(recognizer);
    }
  },
  async 'segmentation'([segmentation], { set, use, options, packs }) {
    const [embedding] = packs['embedding'];
    if (!segmentation || !embedding) return;
    set.diarizer = await use([segmentation, embedding], () =>
      createDiarizer(options.runners.transcription, segmentation, embedding, { threshold: options.diarizationThreshold }),
    );
  },
  // Loaded with a segmentation pack, as a diarizer.
  async 'embedding'() {},
  async 'tagging'([tagging], { set, use, options }) {
    if (tagging) set.audioTagging = await use([tagging], () => createAudioTagger(options.runners.transcription, tagging));
  },
  // format=true uses one punctuation model: a CT-Transformer (offline, loaded first) reads a whole
  // transcript at once, as formatting needs; a CNN-BiLSTM (online) only when there is none.
  async 'offline-punctuation'([pack], { set, use, options }) {
    if (pack && !set.punctuator) set.punctuator = await use([pack], () => createPunctuator(options.runners.transcription, pack));
  },
  async 'online-punctuation'([pack], { set, use, options }) {
    if (pack && !set.punctuator) set.punctuator = await use([pack], () => createPunctuator(options.runners.transcription, pack));
  },
};

function byCapability(packs: AnyEnginePack[]): PacksByCapability {
  const groups = Object.fromEntries(CAPABILITIES.map((c) => [c, [] as EnginePack[]])) as Record<Capability, EnginePack[]>;
  for (const pack of packs) groups[pack.capability].push(pack);
  return groups as PacksByCapability;
}

async function loadCapability<C extends Capability>(capability: C, context: LoadContext): Promise<void> {
  await LOADERS[capability](context.packs[capability], context);
}

/**
 * Builds the set for `packs`, taking over from `previous` every engine whose packs are unchanged.
 * A pack whose engine fails to load is reported in `failed` and left out; the others still load.
 */
export async function loadEngineSet(packs: AnyEnginePack[], options: EngineSetOptions, previous?: EngineSet): Promise<EngineSet> {
  const set = new EngineSet();

  async function use<T extends Closeable>(from: EnginePack[], build: () => Promise<T> | T, expose?: (engine: T, entry: SharedEngine<T>) => T): Promise<T | undefined> {
    const identity = identityOf(from);
    const old = previous?.find(identity) as SharedEngine<T> | undefined;
    if (old) {
      old.retain();
      set.kept.push(...from.map((p) => p.id));
      return set.add(old);
    }
    try {
      const entry = new SharedEngine(await build(), identity);
      if (expose) entry.exposed = expose(entry.engine, entry);
      set.loaded.push(...from.map((p) => p.id));
      return set.add(entry);
    } catch (error) {
      set.failed.push({ pack: from[0]!.id, reason: (error as Error).message });
      return undefined;
    }
  }
  const context: LoadContext = { set, use, options, packs: byCapability(packs) };
  for (const capability of CAPABILITIES) await loadCapability(capability, context);
  return set;
}
