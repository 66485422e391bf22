/**
 * Posts `message`, moving the buffers in `transfer` rather than copying them. A buffer is listed
 * once however many views of it the message holds (Node 22 refuses a list naming one twice), and
 * an empty one is not moved (there is nothing to save, and Node 22 refuses a detached one).
 */
export function postTransferring(target: { postMessage(message: unknown, transfer?: ArrayBuffer[]): void }, message: unknown, transfer: ArrayBuffer[]): void {
  target.postMessage(message, [...new Set(transfer)].filter((buffer) => buffer.byteLength > 0));
}
