/**
 * A decode worker thread (decode-workers.ts is the main-thread side; decode-protocol.ts the
 * messages): decodes uploads and resamples them, so the event loop does no per-sample work for
 * transcription. Its decoders are warmed in it (WebAssembly compiles per thread) before the calls
 * that come after the warm-up run. ffmpeg runs from here, under slots the main thread holds for the whole server.
 */
import { parentPort } from 'node:worker_threads';
import { decodeAudio } from '../audio/decode.js';
import { ffmpegRunnerOver } from '../audio/ffmpeg.js';
import { resampleYielding } from '../audio/resample-yielding.js';
import { warmUpDecoders } from '../audio/warm-up.js';
import { postTransferring } from '../concurrency/post-transferring.js';
import { errorFromWire, errorToWire, type DecodeReply, type DecodeRequest } from './decode-protocol.js';

const port = parentPort;
if (!port) throw new Error('decode-worker must run in a worker thread');
const send = (reply: DecodeReply, transfer: ArrayBuffer[] = []) => postTransferring(port, reply, transfer);

/** The warm-ups asked for so far, one after another; a call waits for them. */
let warming: Promise<unknown> = Promise.resolve();
/** The calls running here, to stop on `abort`. */
const running = new Map<number, AbortController>();
/** ffmpeg slot requests waiting for the main thread's answer. */
const slotWaiters = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
let nextSlot = 1;

/** An ffmpeg slot from the main thread, for call `call`'s decode (the main thread gives up waiting when that request goes). */
function acquireSlot(call: number): Promise<() => void> {
  const slot = nextSlot++;
  return new Promise((resolve, reject) => {
    slotWaiters.set(slot, { resolve: () => resolve(() => send({ call: 0, op: 'release', slot })), reject });
    send({ call, op: 'acquire', slot });
  });
}

async function handle(request: Exclude<DecodeRequest, { op: 'abort' | 'slot' }>, signal: AbortSignal): Promise<void> {
  const { call } = request;
  if (request.op === 'warm') {
    const warmed = warming.then(() => warmUpDecoders(request.uploads));
    // A decoder whose warm-up failed fails again on the request that uses it, with that request's error.
    warming = warmed.catch(() => undefined);
    return send({ call, op: 'done', warmed: await warmed });
  }
  await warming;
  switch (request.op) {
    case 'decode': {
      const { ffmpeg } = request;
      const audio = await decodeAudio(request.bytes, request.hint, {
        sampleRate: request.sampleRate,
        maxSeconds: request.maxSeconds,
        ffmpeg: ffmpeg && ffmpegRunnerOver({ ...ffmpeg, acquire: () => acquireSlot(call) }),
        signal,
      });
      return send({ call, op: 'done', audio }, [audio.samples.buffer as ArrayBuffer]);
    }
    case 'resample': {
      const samples = await resampleYielding(request.samples, request.fromRate, request.toRate, signal);
      return send({ call, op: 'done', samples }, [samples.buffer as ArrayBuffer]);
    }
  }
}

port.on('message', (request: DecodeRequest) => {
  if (request.op === 'abort') return running.get(request.call)?.abort();
  if (request.op === 'slot') {
    const waiter = slotWaiters.get(request.slot);
    slotWaiters.delete(request.slot);
    if (request.error) waiter?.reject(errorFromWire(request.error));
    else waiter?.resolve();
    return;
  }
  const controller = new AbortController();
  running.set(request.call, controller);
  handle(request, controller.signal)
    .catch((err: unknown) => send({ call: request.call, op: 'failed', error: errorToWire(err) }))
    .finally(() => running.delete(request.call));
});
