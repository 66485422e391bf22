/**
 * One typed, validated, frozen configuration. Values come from the defaults below, then an optional
 * JSON file (`PARLEY_CONFIG`, else `./parley.config.json` when present), then env vars.
 * Every leaf has an env name: `PARLEY_` + the path in UPPER_SNAKE joined by `__`
 * (e.g. `PARLEY_RATE_LIMITS__SYNTHESIS__PER_MINUTE`); the common ones also have the short names
 * of the README (PORT, HOST, DATABASE_URL, PARLEY_DATA_DIR, ...).
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

export interface RateLimit {
  /** Sustained requests per minute per account; 0 disables the limit. */
  perMinute: number;
  /** Bucket size: how many requests may come at once. */
  burst: number;
}

/**
 * Streaming models decode the whole recording, in windows of streamWindowSeconds; offline models
 * decode VAD segments, padded, merged across short pauses, and cut to fit their window. Wherever
 * a window is cut through speech, the two pieces share windowOverlapSeconds and their words are
 * stitched at a word both heard (src/transcription/stitch.ts).
 */
export interface DecodingSettings {
  /** Longest audio a streaming recogniser decodes as one stream (one inference task), seconds. */
  streamWindowSeconds: number;
  /** Silence appended after each streaming window so its last words are decoded, seconds. */
  streamTailPaddingSeconds: number;
  /** Audio shared by the two windows on either side of a cut, seconds; under half of any window. */
  windowOverlapSeconds: number;
  /** Audio added before and after each VAD segment for an offline recogniser, seconds. */
  segmentPadSeconds: number;
  /** VAD segments closer than this are decoded together by an offline recogniser, seconds. */
  segmentMergeGapSeconds: number;
  /** Longest offline segment for models without a fixed window of their own (Whisper's 30 s always applies), seconds. */
  segmentMaxSeconds: number;
}

/** The voice names of OpenAI's speech API, mapped to Parley voices by config.openai.voices. */
export const openAiVoiceNames = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const;

export interface Config {
  port: number;
  host: string;
  /** The SQLite file (when no databaseUrl) and caches a node can rebuild (model verification verdicts). */
  dataDir: string;
  /** Model packs: one folder per pack (see src/models/pack.ts). */
  modelsDir: string;
  /** `postgres://…` for PostgreSQL; empty = SQLite file `<dataDir>/parley.db`. */
  databaseUrl: string;
  /** How the node deals with a database that is slow or gone (a restart, a failover, a full disk). */
  database: {
    /** PostgreSQL: connections at most in this node's pool. */
    poolSize: number;
    /** PostgreSQL: a new connection that is not established within this gets 503, ms. */
    connectTimeoutMs: number;
    /** A statement running longer than this is cancelled (PostgreSQL; the request gets 503), ms. */
    statementTimeoutMs: number;
    /** While the database is unusable it is probed with backoff from 200 ms up to this interval, ms. */
    probeMaxIntervalMs: number;
  };
  /** A key to accept (created on first start if absent). Empty = generate and print one. */
  apiKey: string;
  /** Hosts/CIDRs that URL input and webhooks may reach despite the private-address rule. */
  allowedPrivateHosts: string[];
  logLevel: string;
  /** Docs link sent with the Deprecation header of tts-large. */
  publicDocsUrl: string;
  limits: {
    /** Longest `text` of a synthesis request. */
    maxTextChars: number;
    /** Largest transcription upload or URL download (25 MB, interface.md Limits). */
    maxUploadBytes: number;
    /** Largest JSON body on the other routes. */
    maxJsonBytes: number;
    /**
     * Longest synthesis text after pronunciation dictionaries and normalisation (numbers, dates
     * spelt out): a dictionary entry may turn one word into hundreds of characters. At least maxTextChars.
     */
    maxPreparedTextChars: number;
    /** Longest audio one synthesis request may produce, in seconds (a stream ends with an error event there). */
    maxOutputSeconds: number;
    /** Entries per pronunciation dictionary. */
    maxDictEntries: number;
    /** Pronunciation dictionaries per account. */
    maxDictsPerAccount: number;
    /**
     * Entries the pronunciation dictionaries named by one synthesis request may hold together
     * (400 beyond): what compiling them for one request may cost in memory and time.
     */
    maxDictEntriesPerRequest: number;
    /**
     * Longest audio a transcription request may decode to (seconds; uploads and URLs). Checked
     * against the header before decoding and counted while decoding; longer input is 400.
     */
    maxAudioSeconds: number;
    /** Transcription inputs decoded at once; each holds up to maxAudioSeconds of 16 kHz audio (~460 MB at 2 h). */
    maxConcurrentDecodes: number;
    /** Decodes that may wait for a slot (up to decodeQueueTimeoutMs); more get 503 with Retry-After. */
    decodeQueueSize: number;
    decodeQueueTimeoutMs: number;
  };
  /** The optional ffmpeg fallback decoder (formats Parley does not decode itself). */
  ffmpeg: {
    /** false: never run ffmpeg, refuse the formats that need it. */
    enabled: boolean;
    /** ffmpeg binary; empty = `ffmpeg` on the PATH. */
    path: string;
    /** ffmpeg processes at once. */
    maxConcurrent: number;
    /** Decodes waiting for an ffmpeg slot; more get 503 with Retry-After. */
    queueSize: number;
    /** Longest wait for an ffmpeg slot before 503. */
    queueTimeoutMs: number;
    /** One ffmpeg run is killed after this long (the request gets 400). */
    timeoutMs: number;
  };
  /**
   * Limits of the HTTP server itself. A request's headers must arrive within headersTimeoutMs and
   * its body within bodyTimeoutMs; a response (or SSE stream) whose bytes stop moving for
   * writeStallTimeoutMs is cut and its work stopped.
   */
  http: {
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    /**
     * An idle keep-alive connection is closed after this. Longer than clients and load balancers
     * keep theirs (undici ~4 s, nginx 60 s, AWS ALB 60 s): the side that closes an idle connection
     * must be the client, or a request sent just as the server closes it is lost with ECONNRESET.
     * Connections stay bounded by maxConnections.
     */
    keepAliveTimeoutMs: number;
    writeStallTimeoutMs: number;
    /** Open connections at most; beyond that new connections are closed at once. */
    maxConnections: number;
    /**
     * Reverse proxies (IPs or CIDRs) whose X-Forwarded-For names the client: a request that comes
     * from one of them is counted (rate limits of unauthenticated requests, connection caps) under
     * the address the proxy names. From anyone else the header is ignored, so a client cannot
     * choose its own address. Empty: every client is the address it connects from.
     */
    trustedProxies: string[];
    /**
     * Open connections from one address at most (a listed proxy is exempt); beyond that its new
     * connections are closed at once, so one client cannot hold every slot of maxConnections.
     */
    maxConnectionsPerAddress: number;
    /**
     * Under pressure (open connections at PRESSURE_FRACTION of maxConnections, see
     * connection-limits.ts) idle keep-alive connections are closed after this instead of
     * keepAliveTimeoutMs, so idle ones give their slots to clients with work.
     */
    pressureKeepAliveTimeoutMs: number;
  };
  auth: {
    /**
     * How long a key lookup (found or not) is remembered. A revoked key stops working within this
     * time; a request with a known key costs no database work meanwhile.
     */
    keyCacheTtlMs: number;
    /** Key lookups remembered at most. */
    keyCacheMaxEntries: number;
    /**
     * While the database is unavailable, a key verified within this long still works (requests
     * that need no database, such as synthesis, go on); 0 = only within keyCacheTtlMs.
     */
    keyOutageGraceMs: number;
  };
  rateLimits: {
    synthesis: RateLimit;
    transcription: RateLimit;
    management: RateLimit;
    /**
     * Per client IP, for requests that are not authenticated from the key cache: every key
     * lookup in the database and every 401 takes a token, so requests without a valid key cost
     * no more database work than this allows.
     */
    unauthenticated: RateLimit;
  };
  synthesis: {
    /** Send SSE chunk data as JSON `{"audio","done"}` instead of bare base64 (newer wire format). */
    jsonChunks: boolean;
    /** eSpeak NG worker threads (default: the cores available, at most 8). */
    espeakWorkers: number;
    /** espeak-ng-data for Piper packs that do not ship their own (Debian package espeak-ng-data). */
    espeakDataDir: string;
    /** Neural TTS threads per loaded voice. */
    numThreads: number;
    /**
     * Memory the compiled pronunciation dictionaries may hold, MB (estimated: about 340 bytes per
     * entry plus its text); least recently used go first.
     */
    dictCacheMb: number;
    /**
     * Sentences each TTS engine works on at once across all streams; further ones wait in the
     * synthesis scheduler (first pieces first, then fair sharing: src/synthesis/scheduler.ts).
     */
    workersPerEngine: number;
    /**
     * Worker threads that resample and encode synthesis output, so the event loop only moves
     * finished buffers (default: the cores available); 0 does that work on the event loop.
     */
    outputWorkers: number;
  };
  /**
   * Admission control (src/http/plugins/admission.ts): requests of a family in flight on this node
   * at most; beyond it, or beyond an account's share of it, a request is answered 503 with
   * Retry-After from its headers alone, before its body is read. 0 turns a family's check off.
   */
  admission: {
    synthesis: { maxInFlight: number };
    transcription: { maxInFlight: number };
    /** The fraction of a family's maxInFlight one account may hold (at least one request). */
    accountShare: number;
  };
  /** WebSocket synthesis and streaming transcription (README "Realtime"). */
  realtime: {
    /**
     * Open sockets per account (both kinds together); one more is closed at once with code 1008.
     * With PostgreSQL the limit holds across every node on the database.
     */
    maxSocketsPerAccount: number;
    /**
     * With PostgreSQL: each node renews its open sockets' slots every third of this; the slots of a
     * node that stops renewing (it died) are free this long after its last renewal, ms.
     */
    socketLeaseMs: number;
    /** A socket is closed (1008) after this long, however busy, seconds. */
    maxSessionSeconds: number;
    /** Largest message a client may send, bytes; a larger one closes the socket with code 1009. */
    maxMessageBytes: number;
    /** A socket with no message from the client for this long is closed (1000); ?timeout= may set it per socket, ms. */
    idleTimeoutMs: number;
    /** The most ?timeout= may ask for, ms. */
    maxIdleTimeoutMs: number;
    /** The server pings this often; a client that has not answered the previous ping is dropped, ms. */
    pingIntervalMs: number;
    /** Bytes queued for a client that is not reading above which synthesis pauses. */
    maxBufferedBytes: number;
    /** Synthesis requests queued or buffering on one socket at once; more get an error message. */
    maxRequestsPerSocket: number;
    /** Streaming transcription: partial results of an open utterance at most this often, ms. */
    partialIntervalMs: number;
    /** Streaming transcription: an utterance longer than this is finalised where it is, seconds. */
    maxUtteranceSeconds: number;
  };
  /** Voice cloning (POST /api/v1/tts-large/add_voice and /tts-v3.1/add_voice). */
  cloning: {
    /** Largest sample upload, bytes (5 MB). */
    maxSampleBytes: number;
    /** Longest audio a sample may decode to, seconds (a small file can hold hours of low-bitrate audio). */
    maxSampleAudioSeconds: number;
    /** Least speech (after voice activity detection) a sample must hold, seconds. */
    minSpeechSeconds: number;
    /** The stored sample: the stretch with the most speech, at most this long, seconds. */
    sampleSeconds: number;
    /** Clones one account may keep; add_voice beyond that is 400 until one is deleted. */
    maxClonesPerAccount: number;
    /** Clones created at once on this node (decode, analysis and voice fitting are CPU work). */
    maxConcurrent: number;
    /** Creations that may wait for a slot (up to queueTimeoutMs); more get 503 with Retry-After. */
    queueSize: number;
    queueTimeoutMs: number;
  };
  /** The supervised processes that run every sherpa-onnx model (src/engines/inference-process.ts). */
  inference: {
    /**
     * "shared": one process for every model. "by-capability": synthesis models in one process,
     * transcription models in another, so a crash in one leaves the other's requests alone, for
     * one more Node runtime (~120 MB resident measured with the shared models: bench:inference).
     */
    layout: string;
    /** Every task may take this long, ms ... */
    deadlineBaseMs: number;
    /** ... plus this much per second of audio it carries (transcription), ms ... */
    deadlinePerAudioSecondMs: number;
    /** ... plus this much per character of text (synthesis), ms. */
    deadlinePerCharacterMs: number;
    /** A process whose resident memory passes this is replaced after its current tasks, MB. */
    memoryCeilingMb: number;
    /** First restart delay after a crash, ms; doubles per crash in a row up to restartDelayCapMs. */
    restartDelayMs: number;
    restartDelayCapMs: number;
    /** How long a cancelled or overdue task may take to stop before its process is killed, ms. */
    cancelGraceMs: number;
    /** Tasks that may wait while a process (re)starts; beyond that requests get 503. */
    maxWaiting: number;
    /**
     * Live recognition streams (one per open utterance of a streaming-transcription socket on a
     * streaming recogniser) one process holds; past it an utterance is re-decoded instead.
     */
    maxStreams: number;
    /** A recognition stream with no audio for this long is closed inside its process, ms; above realtime.maxIdleTimeoutMs. */
    streamIdleMs: number;
  };
  transcription: {
    /** Worker threads (inside the inference process) running synchronous sherpa calls (VAD, streaming ASR, diarization). */
    workers: number;
    /** Tasks allowed to wait for a worker; beyond that requests get 503. */
    queueSize: number;
    urlConnectTimeoutMs: number;
    urlTotalTimeoutMs: number;
    urlMaxRedirects: number;
    /** A pause longer than this ends an utterance (seconds). */
    utterancePauseSeconds: number;
    /** Cosine-distance threshold of diarization clustering when the speaker count is unknown. */
    diarizationThreshold: number;
    /** How audio is cut and padded for the recognisers (src/transcription/pipeline.ts); defaults justified below. */
    decoding: DecodingSettings;
  };
  webhooks: {
    retries: number;
    /** Runs of a job that may end with its inference process dying before the job fails. */
    maxInferenceCrashes: number;
    backoffBaseMs: number;
    backoffCapMs: number;
    timeoutMs: number;
    /** Jobs run at once by this process. */
    concurrency: number;
    /** How often the runner looks for due jobs when idle. */
    pollMs: number;
    /** A job locked longer than this by a process that died is taken up again. */
    staleLockMs: number;
    /**
     * Finished transcriptions kept in memory while the database cannot record them, bytes of
     * result at most; beyond it a result is dropped and its job transcribed again later.
     */
    maxHeldResultBytes: number;
    /** After a rotation, deliveries are signed with the old secret too for this long (both signatures), seconds. */
    secretOverlapSeconds: number;
  };
  /** The OpenAI-compatible API under /v1 (src/http/routes/openai/). */
  openai: {
    /** The generation (tts-v2, tts-v3.1, tts-large) or pack id that tts-1, tts-1-hd and gpt-4o-mini-tts stand for. */
    speechModel: string;
    /**
     * OpenAI's voice names → Parley voice ids. A name whose voice the chosen model lacks speaks
     * with that model's first voice of the same gender.
     */
    voices: Record<(typeof openAiVoiceNames)[number], string>;
  };
  /** CORS for browser clients on other origins (the playground at / needs none). */
  cors: {
    /** Origins allowed to call the API, e.g. https://chat.example.com; "*" allows any; empty sends no CORS headers. */
    allowedOrigins: string[];
    /** How long a browser may cache a preflight answer. */
    maxAgeSeconds: number;
  };
  /** HTTPS and WSS on the main port: both files set (PEM), else plain HTTP. Read again on SIGHUP. */
  tls: {
    /** The certificate chain, PEM. */
    certFile: string;
    /** Its private key, PEM. */
    keyFile: string;
  };
  /**
   * The Wyoming protocol (Home Assistant's speech services) on its own TCP port. Wyoming has no
   * authentication: every connection acts for the account of apiKey, so the port must only be
   * reachable by who may use that account. Sockets' limits (realtime.*) apply to it.
   */
  wyoming: {
    /** 0 = off. */
    port: number;
    /** Loopback by default: open it wider only on a trusted network. */
    host: string;
    /** The key (sk_…) whose account every Wyoming request uses; needed when port is set. */
    apiKey: string;
    /** Voice of a synthesize event naming none (a voice id); empty = openai.voices.alloy's, else the first voice. */
    defaultVoice: string;
  };
  retention: {
    /** Finished jobs (succeeded or failed), their results and delivery attempts are deleted this many days after they finished; 0 keeps them. */
    days: number;
    /** Jobs deleted per transaction. */
    batchSize: number;
    /** How often the node holding the retention lease looks for jobs to delete. */
    intervalMs: number;
  };
  /** Prometheus metrics. */
  metrics: {
    /** Port of the metrics' own listener (GET /metrics, no key); 0 = no listener. */
    port: number;
    /** Address that listener binds; loopback unless the scraper is elsewhere. */
    host: string;
    /** When set, GET /metrics on the main port answers with this as its bearer token; empty = not on the main port. */
    token: string;
  };
}

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

export const defaultConfig: Config = {
  port: 8080,
  host: '0.0.0.0',
  dataDir: './data',
  modelsDir: './models',
  databaseUrl: '',
  database: { poolSize: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000, probeMaxIntervalMs: 5_000 },
  apiKey: '',
  allowedPrivateHosts: [],
  logLevel: 'info',
  publicDocsUrl: '/docs#tag/tts-v2',
  limits: {
    maxTextChars: 10_000,
    maxUploadBytes: 25 * 1024 * 1024,
    maxJsonBytes: 1024 * 1024,
    maxPreparedTextChars: 20_000,
    maxOutputSeconds: 1_800,
    maxDictEntries: 10_000,
    maxDictsPerAccount: 100,
    maxDictEntriesPerRequest: 20_000,
    maxAudioSeconds: 7_200,
    maxConcurrentDecodes: cores,
    decodeQueueSize: 32,
    decodeQueueTimeoutMs: 60_000,
  },
  http: {
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 120_000,
    keepAliveTimeoutMs: 65_000,
    writeStallTimeoutMs: 30_000,
    maxConnections: 1_000,
    trustedProxies: [],
    maxConnectionsPerAddress: 128,
    pressureKeepAliveTimeoutMs: 1_000,
  },
  auth: { keyCacheTtlMs: 5_000, keyCacheMaxEntries: 10_000, keyOutageGraceMs: 300_000 },
  ffmpeg: { enabled: true, path: '', maxConcurrent: cores, queueSize: 8, queueTimeoutMs: 10_000, timeoutMs: 120_000 },
  rateLimits: {
    synthesis: { perMinute: 600, burst: 60 },
    transcription: { perMinute: 120, burst: 20 },
    management: { perMinute: 600, burst: 60 },
    unauthenticated: { perMinute: 600, burst: 100 },
  },
  synthesis: {
    jsonChunks: false,
    // ~50 MB each, and each speaks ~150× faster than real time: past 8 more memory buys little.
    espeakWorkers: Math.min(cores, 8),
    espeakDataDir: '/usr/lib/x86_64-linux-gnu/espeak-ng-data',
    numThreads: 1,
    dictCacheMb: 64,
    // As many as the cores (and eSpeak's workers): a sentence waiting beyond them waits in the
    // scheduler, where first pieces can still pass it, not in the engine's own queue.
    workersPerEngine: cores,
    outputWorkers: cores,
  },
  admission: {
    // Several times what keeps every engine busy (on 2 cores, 2 decodes and 2 workers for transcription; a
    // synthesis stream waits on its client part of the time), so an account's share still lets
    // an application behind one key run 8 transcriptions and 32 streams at once.
    synthesis: { maxInFlight: 64 },
    transcription: { maxInFlight: 16 },
    accountShare: 0.5,
  },
  realtime: {
    maxSocketsPerAccount: 100,
    socketLeaseMs: 30_000,
    maxSessionSeconds: 3_600,
    maxMessageBytes: 1024 * 1024,
    idleTimeoutMs: 60_000,
    maxIdleTimeoutMs: 600_000,
    pingIntervalMs: 20_000,
    maxBufferedBytes: 1024 * 1024,
    maxRequestsPerSocket: 16,
    partialIntervalMs: 500,
    maxUtteranceSeconds: 30,
  },
  cloning: {
    maxSampleBytes: 5 * 1024 * 1024,
    maxSampleAudioSeconds: 300,
    minSpeechSeconds: 3,
    sampleSeconds: 15,
    maxClonesPerAccount: 50,
    maxConcurrent: 1,
    queueSize: 8,
    queueTimeoutMs: 30_000,
  },
  inference: {
    layout: 'shared',
    deadlineBaseMs: 60_000,
    deadlinePerAudioSecondMs: 2_000,
    deadlinePerCharacterMs: 100,
    memoryCeilingMb: 4096,
    restartDelayMs: 250,
    restartDelayCapMs: 30_000,
    cancelGraceMs: 5_000,
    maxWaiting: 64,
    // Measured: 100 OnlineStreams of the shared zipformer hold 39 MB after 5 s of audio each (an utterance lasts at most realtime.maxUtteranceSeconds).
    maxStreams: 256,
    streamIdleMs: 900_000,
  },
  transcription: {
    workers: cores,
    queueSize: 32,
    urlConnectTimeoutMs: 5_000,
    urlTotalTimeoutMs: 60_000,
    urlMaxRedirects: 3,
    utterancePauseSeconds: 0.8,
    diarizationThreshold: 0.5,
    decoding: {
      // Figures: WER of the shared GigaSpeech 3.3M streaming transducer on the 23 labelled English
      // corpus files (en/ and emotion/, 228 words; one word = 0.44 points), whole-file decode 7.46%.
      // 300 s: one task then carries 19 MB of samples and cuts are rare; cuts cost nothing measurable
      // (8 s windows with a 2 s overlap gave 6.58%).
      streamWindowSeconds: 300,
      // 0.2 s → 7.89%, 0.4 / 0.66 / 1.0 s → 7.46%; 0.66 is sherpa-onnx's Python examples' value, with margin over 0.4.
      streamTailPaddingSeconds: 0.66,
      // 8 s windows: overlap 0 → 7.89%, 1 s → 6.58%, 2 s → 6.58%, 3 s → 7.02% (5 s windows: 9.65, 6.14, -, -).
      // 2 s holds a few words to stitch at even for slow speech, for 0.7% more decoding at 300 s windows.
      windowOverlapSeconds: 2,
      // The streaming model decoding padded VAD segments as an offline model would: pad 0 → 19.7%,
      // 0.1 → 9.2%, 0.3 → 7.5%, 0.5 → 6.6%, 0.75 → 6.1%, 1.0 → 6.1% (merge gap 0.5 s); padding never
      // reaches past half the pause to the next segment, so more than 0.75 s changes little.
      segmentPadSeconds: 0.75,
      // Same measurement, pad 0.75: gap 0.3 s → 6.6%, 0.5 s → 6.1%, 0.8 s → 6.1%. Merging gives an
      // offline model context across short pauses; the window limit below still bounds the merge.
      segmentMergeGapSeconds: 0.5,
      // No offline model could be measured here; 30 s is Whisper's window, and the VAD's own cap.
      segmentMaxSeconds: 30,
    },
  },
  webhooks: {
    retries: 10,
    maxInferenceCrashes: 3,
    backoffBaseMs: 2_000,
    backoffCapMs: 300_000,
    timeoutMs: 10_000,
    concurrency: 2,
    pollMs: 1_000,
    staleLockMs: 120_000,
    maxHeldResultBytes: 64 * 1024 * 1024,
    secretOverlapSeconds: 86_400,
  },
  openai: {
    speechModel: 'tts-v2',
    voices: {
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
    },
  },
  cors: { allowedOrigins: [], maxAgeSeconds: 600 },
  tls: { certFile: '', keyFile: '' },
  wyoming: { port: 0, host: '127.0.0.1', apiKey: '', defaultVoice: '' },
  retention: { days: 7, batchSize: 500, intervalMs: 60_000 },
  metrics: { port: 0, host: '127.0.0.1', token: '' },
};

/** Short env names of the README, mapped onto config paths. */
const envAliases: Record<string, string[]> = {
  PORT: ['port'],
  HOST: ['host'],
  DATABASE_URL: ['databaseUrl'],
  PARLEY_API_KEY: ['apiKey'],
  PARLEY_DATA_DIR: ['dataDir'],
  PARLEY_MODELS_DIR: ['modelsDir'],
  PARLEY_ALLOWED_PRIVATE_HOSTS: ['allowedPrivateHosts'],
  PARLEY_LOG_LEVEL: ['logLevel'],
  PARLEY_WEBHOOK_BACKOFF_MS: ['webhooks', 'backoffBaseMs'],
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

function toUpperSnake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

function leafPaths(obj: object, prefix: string[] = []): string[][] {
  return Object.entries(obj).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? leafPaths(v, [...prefix, k]) : [[...prefix, k]],
  );
}

function getAt(obj: any, p: string[]): any {
  return p.reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

function setAt(obj: any, p: string[], value: unknown): void {
  const last = p[p.length - 1]!;
  const parent = p.slice(0, -1).reduce((o, k) => (o[k] ??= {}), obj);
  parent[last] = value;
}

/** Parse an env string into the type of the default at that path. */
function parseEnvValue(raw: string, sample: unknown, name: string, problems: string[]): unknown {
  if (typeof sample === 'number') {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) problems.push(`${name} must be a number (got "${raw}")`);
    return n;
  }
  if (typeof sample === 'boolean') {
    if (!['true', 'false', '1', '0'].includes(raw)) problems.push(`${name} must be true or false (got "${raw}")`);
    return raw === 'true' || raw === '1';
  }
  if (Array.isArray(sample)) return raw.split(',').map((s) => s.trim()).filter(Boolean);
  return raw;
}

function merge(target: any, source: any, problems: string[], where: string, pathSoFar: string[] = []): void {
  for (const [k, v] of Object.entries(source ?? {})) {
    const p = [...pathSoFar, k];
    const current = getAt(defaultConfig, p);
    if (current === undefined) {
      problems.push(`${where}: unknown option "${p.join('.')}"`);
    } else if (current !== null && typeof current === 'object' && !Array.isArray(current)) {
      merge(target, v, problems, where, p);
    } else {
      setAt(target, p, v);
    }
  }
}

function validate(config: Config, problems: string[]): void {
  for (const p of leafPaths(defaultConfig)) {
    const want = getAt(defaultConfig, p);
    const got = getAt(config, p);
    const name = p.join('.');
    if (Array.isArray(want)) {
      if (!Array.isArray(got) || got.some((x) => typeof x !== 'string')) problems.push(`${name} must be a list of strings`);
    } else if (typeof got !== typeof want) {
      problems.push(`${name} must be a ${typeof want}`);
    } else if (typeof got === 'number' && (got < 0 || !Number.isFinite(got))) {
      problems.push(`${name} must be a non-negative number`);
    }
  }
  if (config.port > 65535 || !Number.isInteger(config.port)) problems.push('port must be an integer 0..65535');
  if (config.databaseUrl && !/^(postgres|postgresql):\/\//.test(config.databaseUrl) && !config.databaseUrl.startsWith('sqlite:'))
    problems.push('databaseUrl must start with postgres:// (or sqlite:<file>)');
  if (config.apiKey && !/^sk_[A-Za-z0-9]{32,}$/.test(config.apiKey))
    problems.push('PARLEY_API_KEY must look like sk_ followed by at least 32 letters or digits');
  if (config.transcription.workers < 1) problems.push('transcription.workers must be at least 1');
  if (config.synthesis.espeakWorkers < 1) problems.push('synthesis.espeakWorkers must be at least 1');
  if (config.synthesis.workersPerEngine < 1) problems.push('synthesis.workersPerEngine must be at least 1');
  for (const name of ['maxSocketsPerAccount', 'maxSessionSeconds', 'maxMessageBytes', 'idleTimeoutMs', 'pingIntervalMs', 'maxRequestsPerSocket', 'partialIntervalMs', 'maxUtteranceSeconds'] as const)
    if (config.realtime[name] < 1) problems.push(`realtime.${name} must be at least 1`);
  if (!(config.admission.accountShare > 0 && config.admission.accountShare <= 1)) problems.push('admission.accountShare must be more than 0 and at most 1');
  if (config.realtime.socketLeaseMs < 300) problems.push('realtime.socketLeaseMs must be at least 300');
  if (config.realtime.maxIdleTimeoutMs < config.realtime.idleTimeoutMs) problems.push('realtime.maxIdleTimeoutMs must be at least realtime.idleTimeoutMs');
  if (config.inference.streamIdleMs <= config.realtime.maxIdleTimeoutMs) problems.push('inference.streamIdleMs must be more than realtime.maxIdleTimeoutMs');
  if (!['by-capability', 'shared'].includes(config.inference.layout)) problems.push('inference.layout must be "by-capability" or "shared"');
  if (config.webhooks.maxInferenceCrashes < 1) problems.push('webhooks.maxInferenceCrashes must be at least 1');
  if (config.retention.batchSize < 1 || !Number.isInteger(config.retention.batchSize)) problems.push('retention.batchSize must be a whole number of at least 1');
  if (config.retention.intervalMs < 100) problems.push('retention.intervalMs must be at least 100');
  if (config.database.poolSize < 1 || !Number.isInteger(config.database.poolSize)) problems.push('database.poolSize must be a whole number of at least 1');
  for (const name of ['connectTimeoutMs', 'statementTimeoutMs', 'probeMaxIntervalMs'] as const)
    if (config.database[name] < 100) problems.push(`database.${name} must be at least 100`);
  if (config.limits.maxPreparedTextChars < config.limits.maxTextChars)
    problems.push('limits.maxPreparedTextChars must be at least limits.maxTextChars');
  for (const name of ['headersTimeoutMs', 'bodyTimeoutMs', 'keepAliveTimeoutMs', 'writeStallTimeoutMs', 'maxConnections', 'maxConnectionsPerAddress', 'pressureKeepAliveTimeoutMs'] as const)
    if (config.http[name] < 1) problems.push(`http.${name} must be at least 1`);
  for (const proxy of config.http.trustedProxies ?? [])
    if (!ipaddr.isValid(proxy) && !ipaddr.isValidCIDR(proxy)) problems.push(`http.trustedProxies: "${proxy}" must be an IP address or a CIDR range`);
  if (!(config.limits.maxAudioSeconds >= 1)) problems.push('limits.maxAudioSeconds must be at least 1');
  if (config.ffmpeg.maxConcurrent < 1) problems.push('ffmpeg.maxConcurrent must be at least 1');
  if (!config.openai.speechModel) problems.push('openai.speechModel must name a generation or pack');
  for (const origin of config.cors.allowedOrigins)
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) problems.push(`cors.allowedOrigins: "${origin}" must be "*" or scheme://host[:port] with no path`);
  if (config.limits.maxConcurrentDecodes < 1) problems.push('limits.maxConcurrentDecodes must be at least 1');
  const decoding = config.transcription.decoding;
  for (const name of ['streamWindowSeconds', 'segmentMaxSeconds'] as const)
    if (!(decoding[name] > 2 * decoding.windowOverlapSeconds)) problems.push(`transcription.decoding.${name} must be more than twice windowOverlapSeconds`);
  if (Boolean(config.tls.certFile) !== Boolean(config.tls.keyFile)) problems.push('tls.certFile and tls.keyFile must be set together (or neither, for plain HTTP)');
  if (config.wyoming.port > 65535 || !Number.isInteger(config.wyoming.port)) problems.push('wyoming.port must be an integer 0..65535 (0 = off)');
  if (config.wyoming.port && !/^sk_[A-Za-z0-9]{32,}$/.test(config.wyoming.apiKey))
    problems.push('wyoming.apiKey (PARLEY_WYOMING__API_KEY) must be set to the key (sk_…) whose account Wyoming connections use');
  if (config.cloning.maxConcurrent < 1) problems.push('cloning.maxConcurrent must be at least 1');
  if (config.metrics.port > 65535 || !Number.isInteger(config.metrics.port)) problems.push('metrics.port must be an integer 0..65535 (0: no metrics listener)');
  if (config.metrics.port > 0 && config.metrics.port === config.port) problems.push('metrics.port must differ from port');
  if (config.metrics.token && config.metrics.token.length < 16) problems.push('metrics.token must be at least 16 characters');
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
 * Reports every bad field in one ConfigError.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> | Record<string, unknown> = {}): Config {
  const problems: string[] = [];
  const config: any = structuredClone(defaultConfig);

  const file = env.PARLEY_CONFIG || (existsSync('parley.config.json') ? 'parley.config.json' : '');
  if (file) {
    try {
      merge(config, JSON.parse(readFileSync(file, 'utf8')) as Json, problems, file);
    } catch (err) {
      problems.push(`${file}: ${(err as Error).message}`);
    }
  }

  for (const p of leafPaths(defaultConfig)) {
    const name = 'PARLEY_' + p.map(toUpperSnake).join('__');
    const raw = env[name];
    if (raw !== undefined) setAt(config, p, parseEnvValue(raw, getAt(defaultConfig, p), name, problems));
  }
  for (const [name, p] of Object.entries(envAliases)) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') setAt(config, p, parseEnvValue(raw, getAt(defaultConfig, p), name, problems));
  }

  merge(config, overrides, problems, 'overrides');
  validate(config, problems);
  if (problems.length) throw new ConfigError(problems);

  config.dataDir = path.resolve(config.dataDir);
  config.modelsDir = path.resolve(config.modelsDir);
  return deepFreeze(config as Config);
}
