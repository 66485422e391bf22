/** What pools of worker threads (synthesis output, transcription decoding) share. */
import type { Worker } from 'node:worker_threads';

/** Marks every live thread of a pool dead and ends it; a thread kept unreferenced while idle is referenced until it has exited. */
export async function terminateThreads(threads: readonly ({ worker: Worker; dead: boolean } | undefined)[]): Promise<void> {
  await Promise.all(
    threads.map(async (thread) => {
      if (!thread || thread.dead) return;
      thread.dead = true;
      thread.worker.ref();
      await thread.worker.terminate();
    }),
  );
}
