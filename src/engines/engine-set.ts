/**
 * Every engine built from the usable model packs, as one unit that a reload swaps in whole.
 *
 * Engines are shared between sets and reference-counted: a reload keeps the engine of every pack
 * whose revision did not change (nothing is loaded twice), builds engines for new or changed
 * packs, and an engine no set uses any more is closed only when the last request holding it ends
 * — however long that takes. Requests hold a set with retain()/release() (transcription) or one
 * engine with hold() (synthesis, through TtsEngine.hold).
 */
import type { ModelPack } from './model-pack.js';
import { createAudioTagger } from './audio-tagging.js';
import { createDiarizer } from './sherpa-diarizer.js';
import { createOfflineRecognizer, offlinePackKinds } from './sherpa-offline-recognizer.js';
import { createOnlineRecognizer } from './sherpa-online-recognizer.js';
import type { TaskRunner } from './sherpa-tasks.js';
import { createPunctuator } from './sherpa-punctuation.js';
import { createSherpaTtsEngine, createZeroShotTtsEngine, isZeroShotPackKind, type ZeroShotTts } from './sherpa-tts.js';
import { createSherpaVad } from './sherpa-vad.js';
import type { AudioTagger, Diarizer, Punctuator, Recognizer, StreamingVoiceActivityDetector, TtsEngine } from './types.js';

export interface EngineSetOptions {
  /** Where each capability's models run (supervised inference processes in the server). */
  runners: { synthesis: TaskRunner; transcription: TaskRunner };
  espeakDataDir: string;
  numThreads: number;
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
  /** Zero-shot packs (ZipVoice, Pocket TTS): no voices of their own; voice clones speak through them. */
  zeroShot: ZeroShotTts[] = [];
  vad?: StreamingVoiceActivityDetector;
  recognizers: Recognizer[] = [];
  diarizer?: Diarizer;
  audioTagging?: AudioTagger;
  /** The first punctuation pack's model: `format=true` uses it. */
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

const identityOf = (packs: ModelPack[]) => packs.map((p) => `${p.id}@${p.revision ?? ''}`).join('+');

/**
 * Builds the set for `packs`, taking over from `previous` every engine whose packs are unchanged.
 * A pack whose engine fails to load is reported in `failed` and left out; the others still load.
 */
export async function loadEngineSet(packs: ModelPack[], options: EngineSetOptions, previous?: EngineSet): Promise<EngineSet> {
  const set = new EngineSet();
  const { synthesis, transcription } = options.runners;

  async function use<T extends Closeable>(from: ModelPack[], build: () => Promise<T> | T, expose?: (engine: T, entry: SharedEngine<T>) => T): Promise<T | undefined> {
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
  const ofKind = (kind: ModelPack['kind']) => packs.filter((p) => p.kind === kind);

  for (const pack of packs.filter((p) => p.kind.startsWith('tts-') && !isZeroShotPackKind(p.kind))) {
    const engine = await use(
      [pack],
      () => createSherpaTtsEngine(synthesis, [pack], { espeakDataDir: options.espeakDataDir, numThreads: options.numThreads }),
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

  for (const pack of packs.filter((p) => isZeroShotPackKind(p.kind))) {
    const engine = await use(
      [pack],
      () => createZeroShotTtsEngine(synthesis, pack, { espeakDataDir: options.espeakDataDir, numThreads: options.numThreads }),
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

  const vad = ofKind('vad-silero')[0];
  if (vad) set.vad = await use([vad], () => createSherpaVad(transcription, vad));

  // Offline recognisers first: they are the accurate ones when a language has both kinds.
  for (const pack of packs.filter((p) => (offlinePackKinds as readonly string[]).includes(p.kind))) {
    const recognizer = await use([pack], () => createOfflineRecognizer(transcription, pack, { numThreads: options.numThreads }));
    if (recognizer) set.recognizers.push(recognizer);
  }
  for (const pack of ofKind('asr-online-transducer')) {
    const recognizer = await use([pack], () => createOnlineRecognizer(transcription, pack));
    if (recognizer) set.recognizers.push(recognizer);
  }

  const segmentation = ofKind('diarization-segmentation')[0];
  const embedding = ofKind('speaker-embedding')[0];
  if (segmentation && embedding) {
    set.diarizer = await use([segmentation, embedding], () =>
      createDiarizer(transcription, segmentation, embedding, { threshold: options.diarizationThreshold }),
    );
  }

  const tagging = ofKind('audio-tagging')[0];
  if (tagging) set.audioTagging = await use([tagging], () => createAudioTagger(transcription, tagging, options.numThreads));

  // The CT-Transformer first: it reads a whole transcript at once, as format needs.
  const punctuation = ofKind('punctuation-ct-transformer')[0] ?? ofKind('punctuation-cnn-bilstm')[0];
  if (punctuation) set.punctuator = await use([punctuation], () => createPunctuator(transcription, punctuation, options.numThreads));
  return set;
}
