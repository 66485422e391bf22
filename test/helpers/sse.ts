/** Reading Server-Sent Events the way a client does: from the raw body, event by event. */

export interface SseEvent {
  /** Field lines of the event in order, e.g. [['event','chunk'],['data','…'],['done','false']]. */
  fields: [string, string][];
  event: string;
  data: string;
}

function parseEvent(block: string): SseEvent {
  const fields = block.split('\n').map((line): [string, string] => {
    const colon = line.indexOf(':');
    return colon < 0 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, '')];
  });
  const get = (name: string) => fields.find(([k]) => k === name)?.[1] ?? '';
  return { fields, event: get('event') || 'message', data: get('data') };
}

/** Yields events as they arrive; stops when the body ends. */
export async function* sseEvents(response: Response): AsyncGenerator<SseEvent> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.trim()) yield parseEvent(block);
      }
    }
    if (buffer.trim()) yield parseEvent(buffer);
  } finally {
    // A reader that stops early hangs up, as a client that has heard enough does.
    if (finished) reader.releaseLock();
    else await reader.cancel().catch(() => undefined);
  }
}

export async function allSseEvents(response: Response): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const e of sseEvents(response)) events.push(e);
  return events;
}

/** The audio bytes of the chunk events, concatenated in order, and each chunk's size. */
export function chunkBytes(events: SseEvent[]): { bytes: Buffer; sizes: number[] } {
  const parts = events.filter((e) => e.event === 'chunk').map((e) => Buffer.from(e.data, 'base64'));
  return { bytes: Buffer.concat(parts), sizes: parts.map((p) => p.length) };
}
