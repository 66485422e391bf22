/**
 * Kysely table types. Times are ISO-8601 UTC strings in both backends (portable, sortable);
 * JSON columns are text holding JSON.
 */
import type { ColumnType, Generated } from 'kysely';

/** A nullable column an insert may leave out. */
type Optional<T> = ColumnType<T | null, T | null | undefined, T | null>;

export interface AccountTable {
  id: string;
  name: string;
  /** HMAC key of webhook signatures; rotated by the CLI or the admin API. */
  webhook_secret: string;
  /** The secret a rotation replaced: deliveries carry its signature too until previous_webhook_secret_until. */
  previous_webhook_secret: Optional<string>;
  previous_webhook_secret_until: Optional<string>;
  created_at: string;
}

export interface ApiKeyTable {
  id: string;
  account_id: string;
  name: string;
  /** First characters of the key after `sk_`: finds the row without storing the key. */
  prefix: string;
  /** sha256 hex of the whole key; compared in constant time. */
  hash: string;
  created_at: string;
  revoked_at: string | null;
  /** admin | user (KEY_ROLES): only admin keys may call /api/v1/admin/*. */
  role: string;
}

export interface ClonedVoiceTable {
  id: string;
  account_id: string;
  display_name: string;
  accent: string;
  /** JSON array of strings. */
  tags: string;
  model: string;
  /** processing | completed | failed */
  status: string;
  created_at: string;
  /** Unused: the sample is stored in cloned_voice_samples (0006). */
  reference_path: string | null;
  description: Optional<string>;
  /** ISO 639-1 code the clone speaks (the add_voice `language`, default en). */
  language: Optional<string>;
  /** What the sample says: the add_voice `transcript`, or Parley's transcription of it. */
  transcript: Optional<string>;
  /** Engine that speaks the clone: espeak-ng-matched, zipvoice or pocket-tts. */
  engine: Optional<string>;
  /**
   * JSON: that engine's settings (eSpeak variant, pitch, range, rate for espeak-ng-matched; the
   * pack and the sample's referenceText for a zero-shot engine).
   */
  engine_settings: Optional<string>;
  /** JSON VoiceProfile of the sample (src/synthesis/voice-profile.ts). */
  profile: Optional<string>;
  /** Why creation failed, when status is failed. */
  error: Optional<string>;
}

/** The sample a clone was made from: mono 16-bit little-endian PCM, deleted with its clone. */
export interface ClonedVoiceSampleTable {
  voice_id: string;
  sample_rate: number;
  pcm: Uint8Array;
}

export interface PronunciationDictTable {
  id: string;
  account_id: string;
  /** JSON array of {word, pronunciation}. */
  items: string;
  created_at: string;
  updated_at: string;
}

/**
 * A transcription job with webhook delivery (src/jobs/job-states.ts names the states).
 * The transcription outcome (outcome/result/error) is kept apart from the delivery state.
 */
export interface JobTable {
  id: string;
  account_id: string;
  /** The request's X-Request-Id; unique per account, sent again on every delivery attempt. */
  request_id: string;
  /** queued | running | delivering | succeeded | failed (JOB_STATES). */
  state: string;
  /**
   * Versions before 0005 stored job audio as a file under `<dataDir>/jobs/`; such a file is moved
   * into job_audio when a server starts. Always null for jobs stored since.
   */
  audio_path: string | null;
  content_type: string;
  /** JSON TranscriptionOptions. */
  options: string;
  webhook_url: string;
  /** GET | POST (WEBHOOK_METHODS): the method every delivery attempt of the job uses. */
  webhook_method: string;
  /** JSON object of the webhook_extra pairs. */
  webhook_extra: string;
  /** success | failed once transcription has ended, else null. */
  outcome: string | null;
  /** JSON TranscriptionResult when outcome is success. */
  result: string | null;
  /** The sentence sent as `error` in the failure payload when outcome is failed. */
  error: string | null;
  /** Delivery attempts made so far (recorded in job_attempts). */
  attempts: number;
  /**
   * Transcription runs: a claim counts one, a plain release (shutdown, busy workers) takes it
   * back. So while a job waits, it counts the runs that ended with its inference process (or the
   * whole node) dying, and a poison input stops at a limit instead of crashing on forever.
   */
  runs: number;
  /** Why the last delivery attempt did not succeed. */
  last_error: string | null;
  /** When the job is next due: transcription at once, a delivery retry after its backoff. */
  run_at: string;
  /** `<pid>-<random>` of the process working on the job; null when nobody is. */
  locked_by: string | null;
  /** When the lock was taken or last refreshed (heartbeat); older than staleLockMs = abandoned. */
  locked_at: string | null;
  created_at: string;
  updated_at: string;
  /** When the job reached succeeded or failed. */
  finished_at: string | null;
}

/** One webhook delivery attempt. */
export interface JobAttemptTable {
  job_id: string;
  /** 1-based; the value of X-Webhook-Attempt. */
  attempt: number;
  attempted_at: string;
  /** The receiver's HTTP status; null when no response came (timeout, connection error). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** The audio of a job waiting for transcription, in chunks; deleted when transcription ends. */
export interface JobAudioTable {
  job_id: string;
  /** 0-based chunk number. */
  seq: number;
  bytes: Uint8Array;
}

/** A cluster-wide task is done by the node holding its lease (retention); expired leases are free. */
export interface LeaseTable {
  name: string;
  /** The holding node's id. */
  holder: string;
  /** Database-clock time after which another node may take the lease. */
  expires_at: string;
}

/** PostgreSQL rate limits: one token bucket per account and route family, shared by every node. */
export interface RateLimitBucketTable {
  /** `<family>:<account id>`. */
  key: string;
  tokens: number;
  /** Database-clock milliseconds since the epoch of the last change. */
  updated_ms: number;
}

/**
 * A WebSocket open on some node: it holds one of its account's realtime.maxSocketsPerAccount
 * slots until it closes, or, if its node dies, until `expires_at` passes unrenewed.
 */
export interface SocketSlotTable {
  id: string;
  account_id: string;
  /** The id of the node serving the socket (Storage.nodeId). */
  node: string;
  /** synthesis | transcription */
  kind: string;
  opened_at: string;
  /** Database-clock time the node last promised to renew the slot by; later than that, the slot is free. */
  expires_at: string;
}

export interface Database {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  cloned_voices: ClonedVoiceTable;
  cloned_voice_samples: ClonedVoiceSampleTable;
  pronunciation_dicts: PronunciationDictTable;
  jobs: JobTable;
  job_attempts: JobAttemptTable;
  job_audio: JobAudioTable;
  leases: LeaseTable;
  rate_limit_buckets: RateLimitBucketTable;
  socket_slots: SocketSlotTable;
}

export type { Generated };
