/**
 * The Wyoming event reader on bytes as a socket delivers them. How many bytes one read brings is
 * the kernel's and the scheduler's choice, so the reads are made here: one byte each, the worst a
 * client can make the server see.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventReader, isProblem, type WyomingEvent } from '../../../src/http/wyoming/events.js';

const LIMITS = { maxHeaderBytes: 64 * 1024, maxPayloadBytes: 1024 * 1024, maxDataValues: 4_096, handles: (type: string) => type !== 'detection' };

/** The events the reader makes of `bytes` arriving `perRead` at a time, and the CPU time that took (ms). */
function read(bytes: Buffer, perRead: number): { events: WyomingEvent[]; cpuMs: number } {
  const reads = Array.from({ length: Math.ceil(bytes.length / perRead) }, (_, i) => Buffer.from(bytes.subarray(i * perRead, (i + 1) * perRead)));
  const reader = new EventReader(LIMITS);
  const events: WyomingEvent[] = [];
  const started = process.cpuUsage();
  for (const chunk of reads) {
    reader.push(chunk);
    for (let item = reader.next(); item; item = reader.next()) {
      assert.ok(!isProblem(item), JSON.stringify(item));
      events.push(item);
    }
  }
  const spent = process.cpuUsage(started);
  return { events, cpuMs: (spent.user + spent.system) / 1000 };
}

describe('Wyoming event reader', () => {
  it('a 64 KiB event line arriving one byte per read costs under 3 times the CPU of as many bytes of event data arriving so', () => {
    const text = 'x'.repeat(64 * 1024 - 100);
    // The same ping twice: its text inside the JSON line, then in the data bytes after a short line.
    const inLine = Buffer.from(`${JSON.stringify({ type: 'ping', data: { text } })}\n`);
    const data = Buffer.from(JSON.stringify({ text }));
    const inData = Buffer.concat([Buffer.from(`${JSON.stringify({ type: 'ping', data_length: data.length })}\n`), data]);
    assert.ok(inLine.length <= LIMITS.maxHeaderBytes);
    read(inData, 1024); // the code paths compiled before anything is timed
    const asData = read(inData, 1);
    const asLine = read(inLine, 1);
    for (const { events } of [asData, asLine]) assert.deepEqual(events.map((e) => [e.type, (e.data.text as string).length]), [['ping', text.length]]);
    const kib = inLine.length / 1024;
    console.log(`CPU per KiB arriving one byte per read: ${(asLine.cpuMs / kib).toFixed(2)} ms in an event line, ${(asData.cpuMs / kib).toFixed(2)} ms in event data`);
    assert.ok(asLine.cpuMs < 3 * asData.cpuMs + 10, `the line cost ${asLine.cpuMs.toFixed(0)} ms of CPU, the data ${asData.cpuMs.toFixed(0)} ms`);
  });

  it('events split across reads at every byte come out whole, in order, with their payloads', () => {
    const payload = Buffer.from(Array.from({ length: 5_000 }, (_, i) => i % 251));
    const format = '{"width":2,"channels":1}  ';
    const stream = Buffer.concat([
      Buffer.from('{"type":"describe"}\n'),
      Buffer.from(`{"type":"audio-chunk","data":{"rate":16000},"data_length":${format.length},"payload_length":${payload.length}}\n${format}`),
      payload,
      Buffer.from('\n{"type":"ping","data":{"text":"a"},"data_length":12}\n{"text":"b"}'),
    ]);
    for (const perRead of [1, 2, 7, 4_095, 5_000, stream.length]) {
      const { events } = read(stream, perRead);
      assert.deepEqual(
        events.map((e) => [e.type, e.data, e.payload?.equals(payload) ?? null]),
        [
          ['describe', {}, null],
          ['audio-chunk', { rate: 16000, width: 2, channels: 1 }, true],
          ['ping', { text: 'b' }, null],
        ],
        `${perRead} bytes per read`,
      );
    }
  });

  it('data of more JSON values than the limit is refused unparsed; events of types not used are read past, their data and payload unread', () => {
    const heavy = Buffer.from(`{"text":"hi","x":[${'{},'.repeat(LIMITS.maxDataValues)}{}]}`);
    const reader = new EventReader(LIMITS);
    reader.push(Buffer.concat([Buffer.from(`{"type":"synthesize","data_length":${heavy.length}}\n`), heavy]));
    reader.push(Buffer.from(`{"type":"detection","data":{"name":"ok"},"data_length":${heavy.length},"payload_length":3}\n`));
    reader.push(Buffer.concat([heavy, Buffer.from('abc{"type":"ping"}\n')]));
    const items = [reader.next(), reader.next(), reader.next(), reader.next()];
    assert.deepEqual(items[0] && isProblem(items[0]) && [items[0].code, items[0].fatal], ['payload-too-large', false]);
    assert.deepEqual(items.slice(1), [{ type: 'detection', data: { name: 'ok' } }, { type: 'ping', data: {} }, undefined]);
    assert.equal(reader.heldBytes, 0);
  });
});
