/**
 * What one Wyoming connection can make the server hold or spend: the built server in its own
 * process (`parley serve`), as users run it, so that its resident memory and CPU time are its own.
 * Wyoming has no authentication, so these are what anyone who reaches the port can cost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { processMemoryKb } from '../../helpers/process-tree.js';
import { freePort, startServerProcess, type ServerProcess } from '../../helpers/server-process.js';
import { WyomingClient } from '../../helpers/wyoming-client.js';

const KEY = `sk_${'y'.repeat(40)}`;
const MAX_MESSAGE_BYTES = 1024 * 1024;
const MB = 1024 * 1024;

/** The JSON of one event's data, `length` bytes of it, that parses to as many objects as it can: {"x":[{},{},…]}. */
function objectHeavyData(length: number): Buffer {
  const count = Math.floor((length - '{"x":[]}'.length + 1) / 3);
  return Buffer.from(`{"x":[${'{},'.repeat(count - 1)}{}]}`);
}

function rssMb(pid: number): number {
  return processMemoryKb(pid).rss / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The largest resident size `pid` reaches, once it has stopped growing for 2 s (at most a minute). */
async function peakRssMb(pid: number, from: number): Promise<number> {
  let peak = from;
  for (let last = from, still = 0, deadline = Date.now() + 60_000; still < 8 && Date.now() < deadline; ) {
    await sleep(250);
    const now = rssMb(pid);
    peak = Math.max(peak, now);
    still = Math.abs(now - last) < 5 ? still + 1 : 0;
    last = now;
  }
  return peak;
}

describe('Wyoming: what one connection can make the server hold', () => {
  let server: ServerProcess;
  let port: number;

  before(async () => {
    port = await freePort();
    server = await startServerProcess(
      [],
      {
        PARLEY_API_KEY: KEY,
        PARLEY_WYOMING__PORT: String(port),
        PARLEY_WYOMING__API_KEY: KEY,
        PARLEY_REALTIME__MAX_MESSAGE_BYTES: String(MAX_MESSAGE_BYTES),
        // The server waits this long for a client that does not read before it drops it: longer than the test.
        PARLEY_REALTIME__IDLE_TIMEOUT_MS: '120000',
      },
      { built: true },
    );
  });
  after(() => server?.stop());

  it('a client that stops reading during a long synthesize, then sends 64 events of 1 MiB of JSON: the server holds < 200 MB more and still answers', async () => {
    const pid = server.child.pid!;
    const c = await WyomingClient.open(port);
    // Minutes of speech: far more audio than the socket buffers take while the client does not read.
    c.send('synthesize', { text: 'The kitchen lights are on and the front door is locked. '.repeat(170), voice: { name: 'espeak-en-us-female' } });
    assert.equal((await c.next()).type, 'audio-start');
    c.socket.pause();
    await sleep(1_000);
    const before = rssMb(pid);

    const event = (() => {
      const data = objectHeavyData(MAX_MESSAGE_BYTES);
      const header = Buffer.from(`${JSON.stringify({ type: 'synthesize', version: '1.8.0', data_length: data.length })}\n`);
      return Buffer.concat([header, data]);
    })();
    // One event at a time, each handed to the kernel before the next: the server has taken all but what the socket buffers hold.
    const events = 64;
    let written = 0;
    for (; written < events; written++) {
      const flushed = await Promise.race([new Promise<boolean>((resolve) => c.socket.write(event, () => resolve(true))), sleep(5_000).then(() => false)]);
      if (!flushed) break;
    }
    const peak = await peakRssMb(pid, before);
    const held = peak - before;
    console.log(`server RSS ${before.toFixed(0)} MB → peak ${peak.toFixed(0)} MB (+${held.toFixed(0)} MB); ${written} of ${events} events of 1 MiB written`);

    assert.equal(server.child.exitCode, null, 'the server process still runs');
    const health = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(health.status, 200);
    const other = await WyomingClient.open(port);
    other.send('ping', { text: 'still there?' });
    assert.deepEqual(await other.next(), { type: 'pong', data: { text: 'still there?' } });
    other.close();
    c.close();
    assert.ok(held < 200, `the server holds ${held.toFixed(0)} MB more for one connection (bound: 200 MB)`);
  });

  it('16 connections each send a long synthesize whose data also carries 1 MiB of JSON values, then stop reading: the server holds < 150 MB more and refuses them', async () => {
    const pid = server.child.pid!;
    const connections = 16;
    const text = 'The kitchen lights are on and the front door is locked. '.repeat(170);
    const head = Buffer.from(JSON.stringify({ text, voice: { name: 'espeak-en-us-female' } }).slice(0, -1));
    // {"text":…,"voice":…,"context":{"x":[{},{},…]}}: a valid synthesize, with a field this server never reads.
    const filler = objectHeavyData(MAX_MESSAGE_BYTES - head.length - ',"context":}'.length);
    const data = Buffer.concat([head, Buffer.from(',"context":'), filler, Buffer.from('}')]);
    assert.ok(data.length <= MAX_MESSAGE_BYTES);
    const event = Buffer.concat([Buffer.from(`${JSON.stringify({ type: 'synthesize', version: '1.8.0', data_length: data.length })}\n`), data]);
    const clients = await Promise.all(Array.from({ length: connections }, () => WyomingClient.open(port)));
    const before = rssMb(pid);
    for (const c of clients) {
      c.socket.pause();
      c.socket.write(event);
    }
    const peak = await peakRssMb(pid, before);
    const held = peak - before;
    for (const c of clients) c.socket.resume();
    const answers = await Promise.all(clients.map((c) => c.next()));
    for (const c of clients) c.close();
    const refused = answers.filter((e) => e.type === 'error' && e.data.code === 'payload-too-large').length;
    console.log(`server RSS ${before.toFixed(0)} MB → peak ${peak.toFixed(0)} MB (+${held.toFixed(0)} MB) for ${connections} connections; ${refused} refused, first answers: ${[...new Set(answers.map((e) => e.type))].join(', ')}`);
    assert.ok(held < 150, `the server holds ${held.toFixed(0)} MB more for ${connections} connections (bound: 150 MB)`);
    assert.equal(refused, connections, 'each gets an error event: its data holds too many JSON values');
  });
});
