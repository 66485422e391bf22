/**
 * Worker-thread side of the synthesis output workers (output-workers.ts is the main-thread
 * side): holds the pipelines (resampler and encoder) of the responses assigned to this thread.
 *
 * Protocol (main → worker): `{ call, op, pipeline, ... }` with op open (options), begin
 * (fromRate), push (samples, transferred), flush, end, close, and warm (runs every encoder once).
 * Worker → main, for every call but close: `{ call, ok: true, info?, output?, warmed? }` (output
 * buffers transferred) or `{ call, ok: false, message }`.
 */
import { parentPort } from 'node:worker_threads';
import { LocalPipeline, type PipelineInfo, type PipelineOptions, type PipelineOutput } from '../audio/pipeline.js';
import { warmUpEncoders } from '../audio/warm-up.js';
import { postTransferring } from './post-transferring.js';

export type OutputRequest =
  | { call: number; op: 'open'; pipeline: number; options: PipelineOptions }
  | { call: number; op: 'begin'; pipeline: number; fromRate: number }
  | { call: number; op: 'push'; pipeline: number; samples: Float32Array }
  | { call: number; op: 'flush' | 'end' | 'close' | 'warm'; pipeline: number };

export type OutputReply = { call: number; ok: true; info?: PipelineInfo; output?: PipelineOutput; warmed?: string[] } | { call: number; ok: false; message: string };

const port = parentPort;
if (!port) throw new Error('output-worker must run in a worker thread');
const pipelines = new Map<number, LocalPipeline>();

function send(reply: OutputReply): void {
  const output = reply.ok ? reply.output : undefined;
  const transfer = [output?.pcm?.buffer, output?.bytes?.buffer, output?.loudness?.buffer].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
  postTransferring(port!, reply, transfer);
}

async function handle(request: OutputRequest): Promise<void> {
  const { call } = request;
  if (request.op === 'warm') return send({ call, ok: true, warmed: (await warmUpEncoders()).warmed });
  if (request.op === 'open') {
    const pipeline = await LocalPipeline.open(request.options);
    pipelines.set(request.pipeline, pipeline);
    return send({ call, ok: true, info: pipeline.info });
  }
  const pipeline = pipelines.get(request.pipeline);
  if (request.op === 'close') {
    pipeline?.close();
    pipelines.delete(request.pipeline);
    return;
  }
  if (!pipeline) throw new Error(`no pipeline ${request.pipeline}`);
  switch (request.op) {
    case 'begin':
      await pipeline.begin(request.fromRate);
      return send({ call, ok: true });
    case 'push':
      return send({ call, ok: true, output: ownBuffers(pipeline.push(request.samples)) });
    case 'flush':
      return send({ call, ok: true, output: ownBuffers(pipeline.flush()) });
    case 'end':
      pipelines.delete(request.pipeline);
      return send({ call, ok: true, output: ownBuffers(pipeline.end()) });
  }
}

/**
 * Outputs are transferred: one that is a view into a larger buffer (an encoder's own, or Node's
 * shared Buffer pool, which must never be moved) is copied into a buffer of its own first, and so is
 * an empty one (an encoder may hand out one shared empty array: moved once, it would be detached for
 * every later reply). Buffer's `slice` would not do: it is a view of the same memory.
 */
function ownBuffers(output: PipelineOutput): PipelineOutput {
  const copy = <T extends Float32Array | Uint8Array>(a: T): T => (a instanceof Float32Array ? new Float32Array(a) : new Uint8Array(a)) as T;
  const own = <T extends Float32Array | Uint8Array>(a: T | undefined): T | undefined =>
    a && (a.byteLength === 0 || a.byteOffset !== 0 || a.byteLength !== a.buffer.byteLength || !(a.buffer instanceof ArrayBuffer)) ? copy(a) : a;
  // Loudness arrays are made fresh for each output (an empty one is not moved).
  return { samples: output.samples, pcm: own(output.pcm), bytes: own(output.bytes), ...(output.loudness && { loudness: output.loudness }) };
}

/** Calls run one after another in the order they came (opening a pipeline awaits its encoder; a close must not pass it). */
let previous: Promise<void> = Promise.resolve();
port.on('message', (request: OutputRequest) => {
  previous = previous.then(() => handle(request)).catch((err: unknown) => send({ call: request.call, ok: false, message: (err as Error).message }));
});
