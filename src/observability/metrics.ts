/**
 * Parley's Prometheus metrics: one registry per server, the metrics defined once here, and the
 * recorders the lower layers are given (they know only their own observer interfaces). Names
 * follow Prometheus's rules: a `parley_` prefix, base units (`_seconds`, `_bytes`), `_total` on
 * counters. Every label has a bounded set of values: route families, not paths; status classes,
 * not codes; model and recogniser names (as many as the installed packs); process names.
 */
import client from 'prom-client';
import type { InferenceObserver, InferenceProcessStatus, InferenceTaskOutcome, ObservedTask } from '../engines/server/inference-process.js';
import type { JobEvents } from '../jobs/job-events.js';
import type { RealtimeSockets } from '../http/plugins/realtime-sockets.js';
import type { SynthesisObserver } from '../synthesis/synthesize.js';
import type { TranscriptionObserver } from '../transcription/transcribe.js';
import type { Tracing } from './tracing.js';

/** Latency buckets from 5 ms to 2 min: first chunks, requests, inference tasks. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Session lengths, 1 s to 2 h. */
const SESSION_BUCKETS = [1, 5, 15, 60, 300, 900, 1800, 3600, 7200];
/** Real-time factor: processing seconds per audio second. */
const RTF_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2];

/** What the scrape reads from the database (the jobs by state), once across nodes. */
export interface DatabaseGauges {
  /** True when the database answered; `jobs` is set only on the node holding the metrics lease. */
  read(): Promise<{ up: boolean; jobs?: Record<string, number> }>;
  /** Gives the lease up (a node shutting down), so the next node scraped reports at once. */
  release(): Promise<void>;
}

export interface MetricsSources {
  inference?: () => InferenceProcessStatus[];
  sockets?: RealtimeSockets;
  database?: DatabaseGauges;
  jobEvents?: JobEvents;
}

export class ParleyMetrics {
  readonly registry = new client.Registry();

  readonly httpRequests = new client.Counter({
    name: 'parley_http_requests_total',
    help: 'HTTP requests answered, by route family, method and status class',
    labelNames: ['family', 'method', 'status_class'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new client.Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'Time from request to the end of its response (a stream: its whole length)',
    labelNames: ['family', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly refusals = new client.Counter({
    name: 'parley_refusals_total',
    help: 'Requests refused to protect the server: rate limits (429) and admission (503: queues full, inference restarting)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly ttsFirstChunk = new client.Histogram({
    name: 'parley_tts_first_chunk_seconds',
    help: 'Time from the start of a synthesis to its first audio',
    labelNames: ['model', 'engine'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly ttsAudio = new client.Counter({
    name: 'parley_tts_audio_seconds_total',
    help: 'Seconds of audio synthesised',
    labelNames: ['model', 'engine'] as const,
    registers: [this.registry],
  });
  readonly sttAudio = new client.Counter({
    name: 'parley_stt_audio_seconds_total',
    help: 'Seconds of audio transcribed',
    labelNames: ['recognizer'] as const,
    registers: [this.registry],
  });
  readonly sttProcessing = new client.Histogram({
    name: 'parley_stt_processing_seconds',
    help: 'Time to transcribe one upload (decoding, speech detection, recognition)',
    labelNames: ['recognizer'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly sttRealTimeFactor = new client.Histogram({
    name: 'parley_stt_real_time_factor',
    help: 'Processing seconds per second of audio of one transcription',
    labelNames: ['recognizer'] as const,
    buckets: RTF_BUCKETS,
    registers: [this.registry],
  });
  readonly liveSessionSeconds = new client.Histogram({
    name: 'parley_live_session_duration_seconds',
    help: 'How long WebSocket sessions stayed open, by kind',
    labelNames: ['kind'] as const,
    buckets: SESSION_BUCKETS,
    registers: [this.registry],
  });
  readonly inferenceRestarts = new client.Counter({
    name: 'parley_inference_process_restarts_total',
    help: 'Inference processes started again after dying (crash, signal, out-of-memory kill)',
    labelNames: ['process'] as const,
    registers: [this.registry],
  });
  readonly inferenceTaskSeconds = new client.Histogram({
    name: 'parley_inference_task_duration_seconds',
    help: 'Inference tasks from submission to answer, by kind and outcome',
    labelNames: ['process', 'kind', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly inferenceDeadlineOverruns = new client.Counter({
    name: 'parley_inference_deadline_overruns_total',
    help: 'Inference tasks failed for overrunning their deadline',
    labelNames: ['process'] as const,
    registers: [this.registry],
  });
  readonly inferenceDeadlineKills = new client.Counter({
    name: 'parley_inference_deadline_kills_total',
    help: 'Inference processes killed because an overdue task did not let go',
    labelNames: ['process'] as const,
    registers: [this.registry],
  });
  readonly webhookAttempts = new client.Counter({
    name: 'parley_webhook_attempts_total',
    help: 'Webhook delivery attempts made by this node, by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookGiveUps = new client.Counter({
    name: 'parley_webhook_deliveries_failed_total',
    help: 'Jobs whose webhook delivery gave up for good',
    registers: [this.registry],
  });

  constructor() {
    // Process metrics (CPU, memory, event loop lag, GC) under their usual names.
    client.collectDefaultMetrics({ register: this.registry });
  }

  /** Adds what is read at each scrape, once the server's parts exist. */
  attach(sources: MetricsSources): void {
    const registers = [this.registry];
    const { inference, sockets, database, jobEvents } = sources;
    if (inference) {
      new client.Gauge({
        name: 'parley_inference_process_up',
        help: 'Whether the inference process is up and taking tasks (1) or not (0: starting, restarting, not started)',
        labelNames: ['process'],
        registers,
        collect() {
          for (const p of inference()) this.set({ process: p.name }, p.state === 'ready' ? 1 : 0);
        },
      });
      new client.Gauge({
        name: 'parley_inference_process_resident_memory_bytes',
        help: 'Resident memory of the inference process, as it last reported',
        labelNames: ['process'],
        registers,
        collect() {
          for (const p of inference()) if (p.rssMb !== null) this.set({ process: p.name }, p.rssMb * 2 ** 20);
        },
      });
      new client.Gauge({
        name: 'parley_inference_queue_depth',
        help: 'Inference tasks waiting for a (re)starting process, and running in one',
        labelNames: ['process', 'state'],
        registers,
        collect() {
          for (const p of inference()) {
            this.set({ process: p.name, state: 'waiting' }, p.tasks.waiting);
            this.set({ process: p.name, state: 'running' }, p.tasks.running);
          }
        },
      });
    }
    if (sockets) {
      sockets.sessionEnded = (kind, seconds) => this.liveSessionSeconds.observe({ kind }, seconds);
      new client.Gauge({
        name: 'parley_live_sessions_open',
        help: 'WebSocket sessions open on this node, by kind',
        labelNames: ['kind'],
        registers,
        collect() {
          for (const [kind, n] of Object.entries(sockets.report().open)) this.set({ kind }, n);
        },
      });
      // The sockets keep their own running counts; the counter follows them at each scrape.
      const seen = new Map<string, number>();
      new client.Counter({
        name: 'parley_live_session_limit_hits_total',
        help: 'WebSocket limits reached (sockets per account, session length, message size...), by limit',
        labelNames: ['limit'],
        registers,
        collect() {
          for (const [limit, n] of Object.entries(sockets.report().limitHits)) {
            this.inc({ limit }, Math.max(0, n - (seen.get(limit) ?? 0)));
            seen.set(limit, n);
          }
        },
      });
    }
    if (database) {
      // A scrape collects both gauges at once: they share the read in flight, and the next scrape reads afresh.
      let inFlight: ReturnType<DatabaseGauges['read']> | undefined;
      const read = () => (inFlight ??= database.read().finally(() => (inFlight = undefined)));
      new client.Gauge({
        name: 'parley_database_up',
        help: 'Whether the database answered at the last scrape (1) or not (0)',
        registers,
        async collect() {
          this.set((await read()).up ? 1 : 0);
        },
      });
      new client.Gauge({
        name: 'parley_jobs',
        help: 'Transcription jobs by state (reported only by the node holding the metrics lease, so summing nodes counts each job once)',
        labelNames: ['state'],
        registers,
        async collect() {
          this.reset();
          for (const [state, n] of Object.entries((await read()).jobs ?? {})) this.set({ state }, n);
        },
      });
    }
    jobEvents?.on('job:attempt', (e) =>
      this.webhookAttempts.inc({ outcome: e.statusCode === null ? 'unreachable' : e.statusCode < 300 ? 'success' : e.statusCode < 500 ? 'client_error' : 'server_error' }),
    );
    jobEvents?.on('job:failed', () => this.webhookGiveUps.inc());
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  /** Synthesis's recorder. */
  get synthesis(): SynthesisObserver {
    return {
      firstChunk: (model, engine, seconds) => this.ttsFirstChunk.observe({ model, engine }, seconds),
      audioProduced: (model, engine, seconds) => this.ttsAudio.inc({ model, engine }, seconds),
    };
  }

  /** Transcription's recorder. */
  get transcription(): TranscriptionObserver {
    return {
      transcribed: (recognizer, audioSeconds, processingSeconds) => {
        this.sttAudio.inc({ recognizer }, audioSeconds);
        this.sttProcessing.observe({ recognizer }, processingSeconds);
        if (audioSeconds > 0) this.sttRealTimeFactor.observe({ recognizer }, processingSeconds / audioSeconds);
      },
    };
  }
}

/** The supervisor's recorder: task timings and restarts into metrics, a span per task into traces. */
export function inferenceObserver(metrics: ParleyMetrics | undefined, tracing: Tracing | undefined): InferenceObserver {
  return {
    taskStarted(process, kind): ObservedTask {
      const started = performance.now();
      const span = tracing?.startTask(process, kind);
      return {
        carrier: span?.carrier,
        end(outcome: InferenceTaskOutcome) {
          metrics?.inferenceTaskSeconds.observe({ process, kind, outcome }, (performance.now() - started) / 1000);
          span?.end(outcome);
        },
      };
    },
    restarted: (process) => metrics?.inferenceRestarts.inc({ process }),
    deadlineOverrun: (process, killed) => (killed ? metrics?.inferenceDeadlineKills : metrics?.inferenceDeadlineOverruns)?.inc({ process }),
  };
}
