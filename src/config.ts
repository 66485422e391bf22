/**
 * One typed, validated, frozen configuration, declared once in ConfigSchema: each setting's type,
 * default, bounds and one-line doc. Loading, validation, the Config type and the README's
 * configuration table (scripts/config-table.ts) all come from that schema.
 *
 * Values come from the defaults, then an optional JSON file (`PARLEY_CONFIG`, else
 * `./parley.config.json` when present), then env vars. Every setting has an env name: `PARLEY_` +
 * the path in UPPER_SNAKE joined by `__` (e.g. `PARLEY_RATE_LIMITS__SYNTHESIS__PER_MINUTE`); the
 * common ones also have the short names of the README (PORT, HOST, DATABASE_URL, ...).
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Type, type Static, type TLiteral, type TSchema } from '@sinclair/typebox';
import ipaddr from 'ipaddr.js';

/**
 * CPU cores this process may use: os.availableParallelism() (its CPU affinity), lowered to the
 * container's CPU quota when one is set (cgroup v2 `cpu.max`, else v1 `cpu.cfs_quota_us` ÷
 * `cpu.cfs_period_us`), rounded up: a container limited to 1.5 CPUs on a 64-core host gets 2.
 * The pools whose default follows the machine are sized from it.
 */
export function availableCores(cgroupRoot = '/sys/fs/cgroup'): number {
  const cores = availableParallelism();
  const quota = cgroupQuota(cgroupRoot);
  return quota === undefined ? cores : Math.max(1, Math.min(cores, Math.ceil(quota)));
}

/** CPUs the cgroup may use (quota ÷ period), or undefined when unlimited or unreadable. */
function cgroupQuota(root: string): number | undefined {
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(path.join(root, file), 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const v2 = read('cpu.max')?.split(/\s+/);
  if (v2) return v2[0] === 'max' ? undefined : positiveRatio(v2[0], v2[1]);
  return positiveRatio(read('cpu/cpu.cfs_quota_us'), read('cpu/cpu.cfs_period_us'));
}

function positiveRatio(quota: string | undefined, period: string | undefined): number | undefined {
  const q = Number(quota);
  const p = Number(period);
  return q > 0 && p > 0 ? q / p : undefined;
}

const cores = availableCores();

/**
 * A pool size whose default follows the machine (the cores this process may use); the README shows
 * `shown` instead of this machine's figure.
 */
const fromCores = (value: number, shown: string, description: string, minimum = 1) =>
  Type.Integer({ default: value, minimum, description, defaultShown: shown });

const integer = (value: number, description: string, bounds: { minimum?: number; maximum?: number } = {}) =>
  Type.Integer({ default: value, minimum: 0, ...bounds, description });
const number = (value: number, description: string, bounds: { minimum?: number; maximum?: number; exclusiveMinimum?: number } = {}) =>
  Type.Number({ default: value, ...(bounds.exclusiveMinimum === undefined ? { minimum: 0 } : {}), ...bounds, description });
const text = (value: string, description: string) => Type.String({ default: value, description });
const flag = (value: boolean, description: string) => Type.Boolean({ default: value, description });
const list = (description: string) => Type.Array(Type.String(), { default: [], description });
type LogLevels = [TLiteral<'fatal'>, TLiteral<'error'>, TLiteral<'warn'>, TLiteral<'info'>, TLiteral<'debug'>, TLiteral<'trace'>, TLiteral<'silent'>];
const port = (value: number, description: string) => integer(value, description, { maximum: 65535 });

function rateLimit(perMinute: number, burst: number, who: string) {
  return Type.Object({
    perMinute: integer(perMinute, `sustained requests per minute ${who} (0 = off)`),
    burst: integer(burst, 'requests allowed at once (the bucket size)'),
  });
}

/** The voice names of OpenAI's speech API, mapped to Parley voices by config.openai.voices. */
export const openAiVoiceNames = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const;
type OpenAiVoiceName = (typeof openAiVoiceNames)[number];

const openAiVoiceDefaults: Record<OpenAiVoiceName, string> = {
  alloy: 'espeak-en-us-female',
  ash: 'espeak-en-us-male',
  ballad: 'espeak-en-gb-male',
  coral: 'espeak-en-us-female',
  echo: 'espeak-en-us-male',
  fable: 'espeak-en-gb-male',
  nova: 'espeak-en-us-female',
  onyx: 'espeak-en-us-male',
  sage: 'espeak-en-gb-female',
  shimmer: 'espeak-en-gb-female',
  verse: 'espeak-en-us-male',
  marin: 'espeak-en-us-female',
  cedar: 'espeak-en-gb-male',
};

const OpenAiVoices = Type.Object(
  Object.fromEntries(openAiVoiceNames.map((name) => [name, text(openAiVoiceDefaults[name], `the Parley voice OpenAI's "${name}" speaks with`)])) as {
    [K in OpenAiVoiceName]: ReturnType<typeof text>;
  },
);

/**
 * Streaming models decode the whole recording, in windows of streamWindowSeconds; offline models
 * decode VAD segments, padded, merged across short pauses, and cut to fit their window. Wherever
 * a window is cut through speech, the two pieces share windowOverlapSeconds and their words are
 * stitched at a word both heard (src/transcription/stitch.ts).
 *
 * Figures behind the defaults: WER of the shared GigaSpeech 3.3M streaming transducer on the 23
 * labelled English corpus files (en/ and emotion/, 228 words; one word = 0.44 points), whole-file
 * decode 7.46%.
 * - streamWindowSeconds 300: one task then carries 19 MB of samples and cuts are rare; cuts cost
 *   nothing measurable (8 s windows with a 2 s overlap gave 6.58%).
 * - streamTailPaddingSeconds: 0.2 s → 7.89%, 0.4 / 0.66 / 1.0 s → 7.46%; 0.66 is sherpa-onnx's
 *   Python examples' value, with margin over 0.4.
 * - windowOverlapSeconds, 8 s windows: overlap 0 → 7.89%, 1 s → 6.58%, 2 s → 6.58%, 3 s → 7.02%
 *   (5 s windows: 9.65, 6.14, -, -). 2 s holds a few words to stitch at even for slow speech, for
 *   0.7% more decoding at 300 s windows.
 * - segmentPadSeconds, the streaming model decoding padded VAD segments as an offline model would:
 *   pad 0 → 19.7%, 0.1 → 9.2%, 0.3 → 7.5%, 0.5 → 6.6%, 0.75 → 6.1%, 1.0 → 6.1% (merge gap 0.5 s);
 *   padding never reaches past half the pause to the next segment, so more than 0.75 s changes little.
 * - segmentMergeGapSeconds, same measurement, pad 0.75: gap 0.3 s → 6.6%, 0.5 s → 6.1%, 0.8 s → 6.1%.
 *   Merging gives an offline model context across short pauses; the window limit still bounds the merge.
 * - segmentMaxSeconds: no offline model could be measured here; 30 s is Whisper's window, and the VAD's own cap.
 */
const DecodingSchema = Type.Object({
  streamWindowSeconds: number(300, 'a streaming recogniser decodes the whole recording in windows of this length (one inference task each)'),
  streamTailPaddingSeconds: number(0.66, 'silence fed after each streaming window so its last word is emitted'),
  windowOverlapSeconds: number(2, 'overlap of two windows cut through speech; their words are stitched at a word both heard'),
  segmentPadSeconds: number(0.75, 'audio kept on each side of a VAD segment given to an offline recogniser'),
  segmentMergeGapSeconds: number(0.5, 'VAD segments closer than this are merged for an offline recogniser'),
  segmentMaxSeconds: number(30, "longest merged segment for models without a window of their own (Whisper's 30 s always applies); longer speech is split with overlap"),
});

export const ConfigSchema = Type.Object({
  port: port(8080, 'HTTP port'),
  host: text('0.0.0.0', 'address to listen on'),
  dataDir: text('./data', 'the SQLite database (without `DATABASE_URL`) and caches a node rebuilds itself (model verification verdicts)'),
  modelsDir: text('./models', 'model packs, one folder each'),
  /** What `parley serve` installs on its own, and where packs are downloaded from. */
  models: Type.Object({
    autoPull: flag(
      true,
      '`parley serve` installs what transcription needs when it is missing, in the background while it serves: the default VAD (`silero-vad`) whenever none is installed, and once (remembered in the data dir) the recommended recogniser for `models.autoPullLanguage`; `false`: it never downloads on its own',
    ),
    autoPullLanguage: text('en', 'the language whose recommended recogniser (from the catalogue) a first start installs'),
    mirrorUrl: text('', 'download catalogue packs from this base URL (the asset\'s file name appended, e.g. `http://mirror/silero_vad.onnx`) instead of their upstream hosts; empty: upstream'),
  }),
  databaseUrl: text('', '`postgres://user:pass@host/db` to share one PostgreSQL database between nodes; empty: SQLite in the data dir'),
  /** How the node deals with a database that is slow or gone (a restart, a failover, a full disk). */
  database: Type.Object({
    poolSize: integer(10, 'PostgreSQL connections per node', { minimum: 1 }),
    connectTimeoutMs: integer(5_000, 'a PostgreSQL connection not established within this: the request gets 503', { minimum: 100 }),
    statementTimeoutMs: integer(10_000, 'a PostgreSQL statement running longer is cancelled (503)', { minimum: 100 }),
    probeMaxIntervalMs: integer(5_000, 'while the database is unusable it is probed from every 200 ms, backing off up to this; `Retry-After` follows it', { minimum: 100 }),
  }),
  apiKey: text('', 'an admin key to accept (`sk_` + ≥ 32 letters/digits); without it and with no key stored, one is created and printed once'),
  allowedPrivateHosts: list('comma-separated hosts/CIDRs that URL input and webhooks may reach despite the private-address rule'),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)) as LogLevels, {
    default: 'info',
    description: 'pino log level (JSON logs carry `reqId`)',
  }),
  publicDocsUrl: text('/docs#tag/tts-v2', 'docs link sent with the `Deprecation` header of tts-large'),
  limits: Type.Object({
    maxTextChars: integer(10_000, 'longest synthesis text'),
    maxUploadBytes: integer(25 * 1024 * 1024, 'largest transcription upload / URL download (25 MB)'),
    maxJsonBytes: integer(1024 * 1024, 'largest JSON body on the other routes'),
    // A dictionary entry may turn one word into hundreds of characters.
    maxPreparedTextChars: integer(20_000, 'longest synthesis text after pronunciation dictionaries and normalisation (400 beyond); at least `MAX_TEXT_CHARS`'),
    maxOutputSeconds: number(1_800, 'longest audio one synthesis request may produce (get_speech: 400; a stream ends with an `error` event)'),
    maxDictEntries: integer(10_000, 'entries per pronunciation dictionary'),
    maxDictsPerAccount: integer(100, 'pronunciation dictionaries per account'),
    maxDictEntriesPerRequest: integer(20_000, 'entries the dictionaries one synthesis request names may hold together (400 beyond): bounds what compiling them for one request costs'),
    // Checked against the header before decoding and counted while decoding.
    maxAudioSeconds: number(7_200, 'longest audio a transcription may decode to (uploads and URLs); longer is 400', { minimum: 1 }),
    maxConcurrentDecodes: fromCores(cores, 'the cores', 'transcription inputs decoded at once (each may hold up to `MAX_AUDIO_SECONDS` of 16 kHz audio, ~460 MB at 2 h)'),
    decodeQueueSize: integer(32, 'decodes that may wait for a slot; more get 503 with `Retry-After`'),
    decodeQueueTimeoutMs: integer(60_000, 'longest wait for a decode slot before 503'),
  }),
  /** The optional ffmpeg fallback decoder (formats Parley does not decode itself). */
  ffmpeg: Type.Object({
    enabled: flag(true, '`false` never runs ffmpeg (m4a/AAC and other formats it alone decodes are refused)'),
    path: text('', 'the ffmpeg binary; empty: `ffmpeg` on the PATH'),
    maxConcurrent: fromCores(cores, 'the cores', 'ffmpeg processes at once'),
    queueSize: integer(8, 'decodes that may wait for an ffmpeg slot; more get 503 with `Retry-After`'),
    queueTimeoutMs: integer(10_000, 'longest wait for an ffmpeg slot before 503'),
    timeoutMs: integer(120_000, 'one ffmpeg run is killed after this long (the request gets 400)'),
  }),
  /**
   * Limits of the HTTP server itself. An idle keep-alive connection must outlive the ones clients
   * and load balancers keep (undici ~4 s, nginx 60 s, AWS ALB 60 s): the side that closes an idle
   * connection must be the client, or a request sent just as the server closes it is lost with
   * ECONNRESET. Under pressure (open connections at PRESSURE_FRACTION of maxConnections, see
   * connection-limits.ts) idle ones give their slots to clients with work.
   */
  http: Type.Object({
    headersTimeoutMs: integer(10_000, "a request's headers must arrive within this (else 408 and the connection closed)", { minimum: 1 }),
    bodyTimeoutMs: integer(120_000, "a request's body must arrive within this (else 408 with the family's error body)", { minimum: 1 }),
    keepAliveTimeoutMs: integer(65_000, 'idle keep-alive connections are closed after this (longer than clients and load balancers keep theirs, so the client closes first)', { minimum: 1 }),
    writeStallTimeoutMs: integer(30_000, 'a response or SSE stream the client stops reading for this long is cut, and its synthesis stopped', { minimum: 1 }),
    maxConnections: integer(1_000, 'open connections at most; further ones are closed at once', { minimum: 1 }),
    trustedProxies: list('comma-separated IPs/CIDRs of your reverse proxies: only from them is `X-Forwarded-For` believed (each client behind the proxy then has its own address limits); from anyone else it is ignored'),
    maxConnectionsPerAddress: integer(128, 'open connections from one client address at most (trusted proxies exempt); further ones are closed at once', { minimum: 1 }),
    lingerMaxBytes: integer(32 * 1024 * 1024, 'after an answer sent before its request body was received (a refusal, a 405, a 413), up to this many more bytes of that body are read and dropped so the client can read the answer; past it the connection is closed', { minimum: 0 }),
    lingerTimeoutMs: integer(30_000, 'such a connection is closed at the latest this long after its answer', { minimum: 1 }),
    lingerIdleMs: integer(5_000, 'and as soon as the client sends nothing for this long', { minimum: 1 }),
    pressureKeepAliveTimeoutMs: integer(1_000, 'once 80% of `MAX_CONNECTIONS` are open, idle keep-alive connections are closed after this instead of `KEEP_ALIVE_TIMEOUT_MS`', { minimum: 1 }),
  }),
  auth: Type.Object({
    keyCacheTtlMs: integer(5_000, 'how long a key lookup (found or not) is remembered: a revoked key stops working within this time'),
    keyCacheMaxEntries: integer(10_000, 'key lookups remembered at most'),
    keyOutageGraceMs: integer(300_000, 'while the database is unavailable, a key verified within this long still works (synthesis goes on); `0` = only within the cache TTL'),
  }),
  rateLimits: Type.Object({
    synthesis: rateLimit(600, 60, 'per account for synthesis'),
    transcription: rateLimit(120, 20, 'per account for transcription'),
    management: rateLimit(600, 60, 'per account for voices, dictionaries, keys and jobs'),
    // Every key lookup in the database and every 401 takes a token, so requests without a valid key
    // cost no more database work than this allows.
    unauthenticated: rateLimit(600, 100, 'per client IP for requests not authenticated from the key cache (each key lookup in the database, each 401)'),
  }),
  synthesis: Type.Object({
    jsonChunks: flag(false, 'SSE chunk data as `{"audio","done"}` JSON (newer wire format) instead of bare base64'),
    // ~50 MB each, and each speaks ~150× faster than real time: past 8 more memory buys little.
    espeakWorkers: fromCores(Math.min(cores, 8), 'the cores, at most 8', 'eSpeak NG worker threads (~50 MB each)'),
    espeakDataDir: text('/usr/lib/x86_64-linux-gnu/espeak-ng-data', 'espeak-ng-data for Piper packs that ship none (Debian package espeak-ng-data)'),
    numThreads: integer(1, 'neural TTS threads per loaded voice'),
    dictCacheMb: number(64, 'memory the compiled dictionaries may hold (estimated, about 340 bytes per entry plus its text); least recently used go first'),
    // As many as the cores: a sentence waiting beyond them waits in the scheduler, where first
    // pieces can still pass it, not in the engine's own queue.
    workersPerEngine: fromCores(cores, 'the cores', 'sentences one TTS engine works on at once across all streams; more wait in the scheduler (first pieces first, then playing streams about to run dry, then fair sharing)'),
    outputWorkers: fromCores(cores, 'the cores', 'worker threads that resample and encode synthesis output, so the event loop only moves finished buffers; `0` does that work on the event loop', 0),
    warmUpRounds: integer(2, 'times, at start, each eSpeak worker speaks a short real paragraph in a male and a female voice before `/readyz` is ready (V8 optimises eSpeak only as it runs: without it a first request costs several times a later one), then streams its first sentence once in every encoded format through every output worker; `0` leaves only one short sentence per worker and the encoders’ own warm-up'),
    outputCallsInFlight: integer(2, 'calls one output worker thread is given at a time; the rest wait on the event loop and the most urgent goes next (a playing stream about to run dry, then first audio, then least slack): more keeps a thread busier between calls, fewer lets urgent work pass sooner', { minimum: 1 }),
  }),
  /**
   * Admission control (src/http/plugins/admission.ts). The defaults are several times what keeps
   * every engine busy (2 decodes and 2 workers for transcription; a synthesis stream waits on its
   * client part of the time), so an account's share still lets an application behind one key run
   * 8 transcriptions and 32 streams at once.
   */
  admission: Type.Object({
    synthesis: Type.Object({
      maxInFlight: integer(64, 'synthesis requests in progress on one server at most; the next is answered 503 with `Retry-After` from its headers alone, its body unread (0 = off)'),
    }),
    transcription: Type.Object({
      maxInFlight: integer(16, 'transcription requests in progress on one server at most, as for synthesis (0 = off)'),
    }),
    accountShare: number(0.5, 'the fraction of that depth one account may hold (503 beyond, other accounts still admitted)', { exclusiveMinimum: 0, maximum: 1 }),
  }),
  /** WebSocket synthesis and streaming transcription (README "Realtime"). */
  realtime: Type.Object({
    maxSocketsPerAccount: integer(100, 'open WebSockets per account (across all servers with PostgreSQL); one more is closed with 1008', { minimum: 1 }),
    socketLeaseMs: integer(30_000, "PostgreSQL: a server renews its sockets' slots every third of this; a dead server's slots are free this long after its last renewal", { minimum: 300 }),
    maxSessionSeconds: number(3_600, 'a WebSocket is closed (1008) after this long, however busy', { minimum: 1 }),
    maxMessageBytes: integer(1024 * 1024, 'largest WebSocket message from a client (1009 beyond)', { minimum: 1 }),
    idleTimeoutMs: integer(60_000, 'a socket the client sends nothing on for this long is closed (1000); `?timeout=` (seconds) may set it per socket', { minimum: 1 }),
    maxIdleTimeoutMs: integer(600_000, 'the most `?timeout=` may ask for'),
    pingIntervalMs: integer(20_000, 'server pings; a client that missed the previous one is dropped', { minimum: 1 }),
    maxBufferedBytes: integer(1024 * 1024, 'bytes waiting for a slow client before synthesis pauses'),
    maxRequestsPerSocket: integer(16, 'synthesis requests queued or buffering on one socket; more get an error message', { minimum: 1 }),
    maxQueuedMessageBytes: integer(4 * 1024 * 1024, 'bytes of client messages waiting to be handled on one socket before it stops reading (TCP pushes back on the client) until half of them are handled', { minimum: 1 }),
    maxQueuedMessages: integer(256, 'client messages waiting to be handled on one socket before it stops reading, as for their bytes: tiny messages are bounded by their count', { minimum: 2 }),
    maxMalformedMessagesPerSecond: integer(50, 'messages within one second that are not of the socket\'s protocol (not JSON, not an object, a binary frame where text is expected, an unknown type); one more gets an error message and the socket is closed (1008)', { minimum: 1 }),
    partialIntervalMs: integer(500, 'streaming transcription: partials at most this often (of audio)', { minimum: 1 }),
    maxUtteranceSeconds: number(30, 'streaming transcription: an utterance is finalised at this length', { minimum: 1 }),
    punctuationWaitMs: integer(1_000, 'streaming transcription with format=true: longest wait for the punctuation model on a final; past it the rules format that final', { minimum: 1 }),
  }),
  /** Voice cloning (POST /api/v1/tts-large/add_voice and /tts-v3.1/add_voice, POST /waves/v1/voice-cloning). */
  cloning: Type.Object({
    maxSampleBytes: integer(5 * 1024 * 1024, 'largest add_voice sample (5 MB; larger is 400)'),
    // A small file can hold hours of low-bitrate audio.
    maxSampleAudioSeconds: number(300, 'longest audio a sample may decode to (400 beyond)'),
    minSpeechSeconds: number(3, 'least speech (after VAD) a sample must hold (400 below)'),
    sampleSeconds: number(15, 'the stored sample: the stretch of at most this long with the most speech'),
    maxClonesPerAccount: integer(50, 'clones an account may keep (add_voice beyond is 400 until one is deleted)'),
    // Decoding, analysis and voice fitting are CPU work.
    maxConcurrent: integer(1, 'clones created at once on a node', { minimum: 1 }),
    queueSize: integer(8, 'creations that may wait for a slot; more get 503 with `Retry-After`'),
    queueTimeoutMs: integer(30_000, 'longest wait for a cloning slot before 503'),
    readyTimeoutMs: integer(45_000, 'POST /waves/v1/voice-cloning and the product-named add_voice answer once the clone can speak: longest wait for that (under the 60 s the service\'s SDKs wait), beyond which the clone is dropped and the answer is 500 `voice_clone_timeout`', { minimum: 1 }),
  }),
  /** The supervised processes that run every sherpa-onnx model (src/engines/server/inference-process.ts). */
  inference: Type.Object({
    layout: Type.Union([Type.Literal('shared'), Type.Literal('by-capability')], {
      default: 'shared',
      description: '`shared`: one inference process for every model; `by-capability`: synthesis models in one, transcription models in another (a crash in one spares the other; ~120 MB more, measured by bench:inference)',
    }),
    deadlineBaseMs: integer(60_000, 'every inference task may take this long…'),
    deadlinePerAudioSecondMs: integer(2_000, '…plus this per second of audio it carries…'),
    deadlinePerCharacterMs: integer(100, '…plus this per character of text; past it the task gets 503 and, if it does not stop, its process is killed'),
    memoryCeilingMb: integer(4096, 'an inference process above this resident size is replaced after its current tasks'),
    restartDelayMs: integer(250, 'first restart delay after a crash (doubles per crash in a row, up to `RESTART_DELAY_CAP_MS`)'),
    restartDelayCapMs: integer(30_000, 'longest restart delay after crashes in a row'),
    cancelGraceMs: integer(5_000, 'how long a cancelled or overdue task may take to stop before its process is killed'),
    maxWaiting: integer(64, 'tasks that may wait while a process (re)starts; beyond that requests get 503'),
    // Measured: 100 OnlineStreams of the shared zipformer hold 39 MB after 5 s of audio each (an
    // utterance lasts at most realtime.maxUtteranceSeconds).
    maxStreams: integer(256, 'live recognition streams (one per open utterance of a streaming-transcription socket on a streaming recogniser) an inference process holds; past it an utterance is re-decoded instead'),
    streamIdleMs: integer(900_000, 'a recognition stream without audio for this long is closed inside its process (must exceed `PARLEY_REALTIME__MAX_IDLE_TIMEOUT_MS`)'),
  }),
  transcription: Type.Object({
    workers: fromCores(cores, 'the cores', 'worker threads (inside the inference process) for VAD, streaming ASR, diarization, tagging, punctuation'),
    decodeWorkers: fromCores(cores, 'the cores', 'worker threads that decode and resample uploads (and URL downloads), so the event loop does no per-sample work; `0` does that work on the event loop', 0),
    queueSize: integer(32, 'tasks that may wait for a worker before requests get 503'),
    urlConnectTimeoutMs: integer(5_000, 'a transcription URL whose server does not answer within this is refused'),
    urlTotalTimeoutMs: integer(60_000, 'a transcription URL must be downloaded within this'),
    urlMaxRedirects: integer(3, 'redirects a transcription URL may take'),
    utterancePauseSeconds: number(0.8, 'a pause longer than this ends an utterance'),
    diarizationThreshold: number(0.5, 'cosine-distance threshold of diarization clustering when the speaker count is unknown'),
    decoding: DecodingSchema,
  }),
  webhooks: Type.Object({
    retries: integer(10, 'retries of a webhook delivery after its first attempt; then the job fails'),
    maxInferenceCrashes: integer(3, 'runs of a queued job that may end with its inference process dying before the job fails', { minimum: 1 }),
    backoffBaseMs: integer(2_000, 'first webhook retry delay (doubles, with jitter, up to `BACKOFF_CAP_MS`)'),
    backoffCapMs: integer(300_000, 'longest webhook retry delay'),
    timeoutMs: integer(10_000, 'a webhook receiver must answer within this'),
    concurrency: integer(2, 'jobs run at once by this process'),
    pollMs: integer(1_000, 'how often the runner looks for due jobs when idle'),
    staleLockMs: integer(120_000, 'a job whose node stopped heartbeating this long ago is taken over by another node'),
    maxHeldResultBytes: integer(64 * 1024 * 1024, 'finished transcriptions kept in memory while the database cannot record them; beyond it a job is transcribed again later'),
    secretOverlapSeconds: number(86_400, 'after a webhook secret rotation (admin API or CLI), deliveries carry a signature with the old secret too for this long'),
  }),
  /** The OpenAI-compatible API under /v1 (src/http/routes/openai/). */
  openai: Type.Object({
    speechModel: Type.String({
      default: 'tts-v2',
      minLength: 1,
      description: 'what `tts-1`, `tts-1-hd` and `gpt-4o-mini-tts` stand for on `/v1/audio/speech`: a generation (tts-v2, tts-v3.1, tts-large) or a TTS pack id',
    }),
    // A name whose voice the chosen model lacks speaks with that model's first voice of the same gender.
    voices: OpenAiVoices,
  }),
  /** CORS for browser clients on other origins (the playground at / needs none). */
  cors: Type.Object({
    allowedOrigins: list('comma-separated origins (`https://chat.example.com`) allowed to call the API from a browser; `*` any; empty sends no CORS headers'),
    maxAgeSeconds: integer(600, 'how long a browser may cache a preflight answer'),
  }),
  /** HTTPS and WSS on the main port: both files set (PEM), else plain HTTP. Read again on SIGHUP. */
  tls: Type.Object({
    certFile: text('', 'a PEM certificate (chain): HTTPS and WSS on `PORT` with `KEY_FILE` (both or neither). Read at start and again on `SIGHUP` (files that do not load keep the old ones, logged)'),
    keyFile: text('', 'the PEM private key of `CERT_FILE`'),
  }),
  /**
   * The Wyoming protocol (Home Assistant's speech services) on its own TCP port. Wyoming has no
   * authentication: every connection acts for the account of apiKey, so the port must only be
   * reachable by who may use that account. Sockets' limits (realtime.*) apply to it.
   */
  wyoming: Type.Object({
    port: port(0, 'TCP port of the Wyoming protocol (Home Assistant); 0 = off'),
    host: text('127.0.0.1', 'address Wyoming listens on: loopback unless the network is trusted (see Home Assistant)'),
    apiKey: text('', 'the key (`sk_…`) whose account every Wyoming connection uses; required with a port'),
    defaultVoice: text('', "the voice of a `synthesize` that names none (a voice id); empty: `alloy`'s voice, else the first voice"),
  }),
  retention: Type.Object({
    days: number(7, 'finished jobs, their results and delivery attempts are deleted this many days after they finish; `0` keeps them'),
    batchSize: integer(500, 'jobs deleted per transaction', { minimum: 1 }),
    intervalMs: integer(60_000, 'how often the node holding the retention lease looks for jobs to delete', { minimum: 100 }),
  }),
  /** Prometheus metrics. */
  metrics: Type.Object({
    port: port(0, 'port of the Prometheus metrics listener (`GET /metrics`, no key); 0 = no listener'),
    host: text('127.0.0.1', 'address that listener binds (loopback: set it to reach it from another machine)'),
    token: text('', 'also serve `GET /metrics` on the main port, to requests bearing this token (≥ 16 characters); empty: not on the main port'),
  }),
});

export type Config = Static<typeof ConfigSchema>;
export type RateLimit = Config['rateLimits']['synthesis'];
export type DecodingSettings = Static<typeof DecodingSchema>;

/** Short env names of the README, mapped onto config paths. */
const envAliases: Record<string, string[]> = {
  PORT: ['port'],
  HOST: ['host'],
  DATABASE_URL: ['databaseUrl'],
  PARLEY_API_KEY: ['apiKey'],
  PARLEY_DATA_DIR: ['dataDir'],
  PARLEY_MODELS_DIR: ['modelsDir'],
  PARLEY_MODELS_AUTO_PULL: ['models', 'autoPull'],
  PARLEY_ALLOWED_PRIVATE_HOSTS: ['allowedPrivateHosts'],
  PARLEY_LOG_LEVEL: ['logLevel'],
  PARLEY_WEBHOOK_BACKOFF_MS: ['webhooks', 'backoffBaseMs'],
};

/** One setting of the schema: where it is, its env names, its default and its doc. */
export interface Setting {
  path: string[];
  /** `PARLEY_` + the path in UPPER_SNAKE joined by `__`. */
  env: string;
  /** Short names that set it too (they win over `env`). */
  aliases: string[];
  schema: TSchema;
  default: unknown;
  /** How the README states a default that depends on the machine ("the cores"). */
  defaultShown?: string;
  description: string;
}

function toUpperSnake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

function isGroup(schema: TSchema): boolean {
  return schema.type === 'object';
}

function settingsOf(schema: TSchema, prefix: string[] = []): Setting[] {
  return Object.entries(schema.properties as Record<string, TSchema>).flatMap(([key, child]) => {
    const p = [...prefix, key];
    if (isGroup(child)) return settingsOf(child, p);
    const env = 'PARLEY_' + p.map(toUpperSnake).join('__');
    const aliases = Object.entries(envAliases).flatMap(([name, target]) => (target.join('.') === p.join('.') && name !== env ? [name] : []));
    const shown = typeof child.defaultShown === 'string' ? { defaultShown: child.defaultShown } : {};
    return [{ path: p, env, aliases, schema: child, default: child.default, ...shown, description: String(child.description ?? '') }];
  });
}

/** Every setting, in the schema's order. */
export const settings: readonly Setting[] = settingsOf(ConfigSchema);

function getAt(obj: any, p: string[]): any {
  return p.reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

function setAt(obj: any, p: string[], value: unknown): void {
  const last = p[p.length - 1]!;
  const parent = p.slice(0, -1).reduce((o, k) => (o[k] ??= {}), obj);
  parent[last] = value;
}

function buildDefaults(): Config {
  const config = {};
  for (const s of settings) setAt(config, s.path, structuredClone(s.default));
  return config as Config;
}

export const defaultConfig: Config = deepFreeze(buildDefaults());

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const isNumeric = (schema: TSchema) => schema.type === 'number' || schema.type === 'integer';
const literalsOf = (schema: TSchema): string[] | undefined => (schema.anyOf as TSchema[] | undefined)?.map((s) => String(s.const));

/** Parse an env string into the setting's type; undefined (with a problem) when it is not one. */
function parseEnvValue(raw: string, schema: TSchema, name: string, problems: string[]): unknown {
  if (isNumeric(schema)) {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) {
      problems.push(`${name} must be a number (got "${raw}")`);
      return undefined;
    }
    return n;
  }
  if (schema.type === 'boolean') {
    if (!['true', 'false', '1', '0'].includes(raw)) {
      problems.push(`${name} must be true or false (got "${raw}")`);
      return undefined;
    }
    return raw === 'true' || raw === '1';
  }
  if (schema.type === 'array') return raw.split(',').map((s) => s.trim()).filter(Boolean);
  return raw;
}

function merge(target: any, source: any, problems: string[], where: string, schema: TSchema = ConfigSchema, pathSoFar: string[] = []): void {
  for (const [k, v] of Object.entries(source ?? {})) {
    const p = [...pathSoFar, k];
    const child = (schema.properties as Record<string, TSchema>)[k];
    if (!Object.hasOwn(schema.properties, k) || child === undefined) problems.push(`${where}: unknown option "${p.join('.')}"`);
    else if (isGroup(child)) merge(target, v, problems, where, child, p);
    else setAt(target, p, v);
  }
}

/** What is wrong with one value against its setting's type and bounds, if anything. */
function checkSetting(value: unknown, schema: TSchema, name: string): string | undefined {
  if (isNumeric(schema)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return `${name} must be a number`;
    const { minimum, maximum, exclusiveMinimum } = schema as { minimum?: number; maximum?: number; exclusiveMinimum?: number };
    if (schema.type === 'integer' && maximum !== undefined && (!Number.isInteger(value) || value < (minimum ?? -Infinity) || value > maximum))
      return `${name} must be an integer ${minimum}..${maximum}`;
    if (exclusiveMinimum !== undefined && !(value > exclusiveMinimum && value <= (maximum ?? Infinity)))
      return `${name} must be more than ${exclusiveMinimum}${maximum === undefined ? '' : ` and at most ${maximum}`}`;
    if (minimum !== undefined && value < minimum) return `${name} must be at least ${minimum}`;
    if (maximum !== undefined && value > maximum) return `${name} must be at most ${maximum}`;
    if (schema.type === 'integer' && !Number.isInteger(value)) return `${name} must be a whole number`;
    return undefined;
  }
  if (schema.type === 'boolean') return typeof value === 'boolean' ? undefined : `${name} must be a boolean`;
  if (schema.type === 'array') return Array.isArray(value) && value.every((x) => typeof x === 'string') ? undefined : `${name} must be a list of strings`;
  const literals = literalsOf(schema);
  if (literals) return literals.includes(value as string) ? undefined : `${name} must be one of ${literals.map((l) => `"${l}"`).join(', ')}`;
  if (typeof value !== 'string') return `${name} must be a string`;
  if (schema.minLength !== undefined && value.length < schema.minLength) return `${name} must not be empty`;
  return undefined;
}

/** Rules between settings, and formats a type alone cannot state. */
function crossCheck(config: Config, problems: string[]): void {
  if (config.databaseUrl && !/^(postgres|postgresql):\/\//.test(config.databaseUrl) && !config.databaseUrl.startsWith('sqlite:'))
    problems.push('databaseUrl must start with postgres:// (or sqlite:<file>)');
  if (config.apiKey && !/^sk_[A-Za-z0-9]{32,}$/.test(config.apiKey))
    problems.push('PARLEY_API_KEY must look like sk_ followed by at least 32 letters or digits');
  if (config.realtime.maxIdleTimeoutMs < config.realtime.idleTimeoutMs) problems.push('realtime.maxIdleTimeoutMs must be at least realtime.idleTimeoutMs');
  if (config.inference.streamIdleMs <= config.realtime.maxIdleTimeoutMs) problems.push('inference.streamIdleMs must be more than realtime.maxIdleTimeoutMs');
  if (config.limits.maxPreparedTextChars < config.limits.maxTextChars)
    problems.push('limits.maxPreparedTextChars must be at least limits.maxTextChars');
  for (const proxy of Array.isArray(config.http.trustedProxies) ? config.http.trustedProxies : [])
    if (!ipaddr.isValid(proxy) && !ipaddr.isValidCIDR(proxy)) problems.push(`http.trustedProxies: "${proxy}" must be an IP address or a CIDR range`);
  for (const origin of Array.isArray(config.cors.allowedOrigins) ? config.cors.allowedOrigins : [])
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) problems.push(`cors.allowedOrigins: "${origin}" must be "*" or scheme://host[:port] with no path`);
  const decoding = config.transcription.decoding;
  for (const name of ['streamWindowSeconds', 'segmentMaxSeconds'] as const)
    if (!(decoding[name] > 2 * decoding.windowOverlapSeconds)) problems.push(`transcription.decoding.${name} must be more than twice windowOverlapSeconds`);
  if (Boolean(config.tls.certFile) !== Boolean(config.tls.keyFile)) problems.push('tls.certFile and tls.keyFile must be set together (or neither, for plain HTTP)');
  if (config.wyoming.port && !/^sk_[A-Za-z0-9]{32,}$/.test(config.wyoming.apiKey))
    problems.push('wyoming.apiKey (PARLEY_WYOMING__API_KEY) must be set to the key (sk_…) whose account Wyoming connections use');
  if (config.metrics.port > 0 && config.metrics.port === config.port) problems.push('metrics.port must differ from port');
  if (config.metrics.token && config.metrics.token.length < 16) problems.push('metrics.token must be at least 16 characters');
  if (config.models.mirrorUrl && !/^https?:\/\/[^\s]+$/.test(config.models.mirrorUrl)) problems.push('models.mirrorUrl must be an http or https URL');
  if (config.cloning.sampleSeconds < config.cloning.minSpeechSeconds) problems.push('cloning.sampleSeconds must be at least cloning.minSpeechSeconds');
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    Object.values(o).forEach(deepFreeze);
    Object.freeze(o);
  }
  return o;
}

/**
 * Build the config from defaults, file, env and explicit overrides (tests pass overrides).
 * Reports every bad setting in one ConfigError.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> | Record<string, unknown> = {}): Config {
  const problems: string[] = [];
  const config: any = buildDefaults();

  const file = env.PARLEY_CONFIG || (existsSync('parley.config.json') ? 'parley.config.json' : '');
  if (file) {
    try {
      merge(config, JSON.parse(readFileSync(file, 'utf8')), problems, file);
    } catch (err) {
      problems.push(`${file}: ${(err as Error).message}`);
    }
  }

  for (const s of settings) {
    for (const name of [s.env, ...s.aliases]) {
      const raw = env[name];
      // A short name set to nothing is taken as unset (shells and compose files leave such names behind).
      if (raw === undefined || (raw === '' && name !== s.env)) continue;
      const value = parseEnvValue(raw, s.schema, name, problems);
      if (value !== undefined) setAt(config, s.path, value);
    }
  }

  merge(config, overrides, problems, 'overrides');
  for (const s of settings) {
    const problem = checkSetting(getAt(config, s.path), s.schema, s.path.join('.'));
    if (problem) problems.push(problem);
  }
  crossCheck(config as Config, problems);
  if (problems.length) throw new ConfigError(problems);

  config.dataDir = path.resolve(config.dataDir);
  config.modelsDir = path.resolve(config.modelsDir);
  return deepFreeze(config as Config);
}
