/**
 * Lets pending I/O run between batches of synchronous decoding work, so that decoding a long
 * upload on the main thread never stalls the event loop for more than one batch.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
