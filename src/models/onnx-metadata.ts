/**
 * Reads an ONNX model's `metadata_props` (ModelProto field 14, repeated StringStringEntryProto
 * {key = 1, value = 2}) with a tiny protobuf reader, no dependency. sherpa-onnx keeps everything it
 * needs to know about a model there (Piper: sample_rate, n_speakers, language, voice...), and ends
 * the process when a key it needs is missing, so packs are checked with this before a load.
 *
 * Only the top level of the ModelProto is walked: every field's tag and length is checked against
 * the file size (a truncated or non-protobuf file throws OnnxFormatError), fields other than the
 * metadata are skipped without being read, so a 300 MB model costs a few small reads. The graph
 * (field 7) must be present.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export class OnnxFormatError extends Error {
  override name = 'OnnxFormatError';
}

/** ModelProto field numbers (onnx.proto3). */
const FIELD_GRAPH = 7;
const FIELD_METADATA_PROPS = 14;

/** Random access to the bytes being parsed. */
interface ByteSource {
  readonly size: number;
  read(position: number, length: number): Uint8Array;
}

function bufferSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (position, length) => bytes.subarray(position, position + length) };
}

function fileSource(fd: number, size: number): ByteSource {
  return {
    size,
    read(position, length) {
      const buf = Buffer.alloc(length);
      let done = 0;
      while (done < length) {
        const n = readSync(fd, buf, done, length - done, position + done);
        if (n === 0) break;
        done += n;
      }
      return buf.subarray(0, done);
    },
  };
}

/** A varint at `pos`; returns [value, next position]. Values above 2^53 are refused (no ONNX length is that big). */
function readVarint(src: ByteSource, pos: number, what: string): [number, number] {
  const bytes = src.read(pos, Math.min(10, src.size - pos));
  let value = 0;
  let scale = 1;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) {
      if (!Number.isSafeInteger(value)) throw new OnnxFormatError(`${what} at byte ${pos} is out of range`);
      return [value, pos + i + 1];
    }
    scale *= 128;
  }
  throw new OnnxFormatError(`${what} at byte ${pos} runs past the end of the data (truncated file?)`);
}

interface Field {
  field: number;
  wireType: number;
  /** For length-delimited fields: where the payload starts and its length. */
  start: number;
  length: number;
  /** For varints: the value. */
  value: number;
  next: number;
}

function readField(src: ByteSource, pos: number, end: number): Field {
  const [tag, afterTag] = readVarint(src, pos, 'field tag');
  const field = Math.floor(tag / 8);
  const wireType = tag % 8;
  if (field === 0) throw new OnnxFormatError(`invalid field number 0 at byte ${pos}`);
  switch (wireType) {
    case 0: {
      const [value, next] = readVarint(src, afterTag, `field ${field}`);
      if (next > end) throw new OnnxFormatError(`field ${field} runs past its message (truncated file?)`);
      return { field, wireType, start: afterTag, length: 0, value, next };
    }
    case 1:
    case 5: {
      const length = wireType === 1 ? 8 : 4;
      if (afterTag + length > end) throw new OnnxFormatError(`field ${field} runs past the end of the data (truncated file?)`);
      return { field, wireType, start: afterTag, length, value: 0, next: afterTag + length };
    }
    case 2: {
      const [length, start] = readVarint(src, afterTag, `length of field ${field}`);
      if (start + length > end) {
        throw new OnnxFormatError(
          `field ${field} at byte ${pos} claims ${length} bytes but only ${Math.max(0, end - start)} remain (truncated file?)`,
        );
      }
      return { field, wireType, start, length, value: 0, next: start + length };
    }
    default:
      throw new OnnxFormatError(`unsupported protobuf wire type ${wireType} at byte ${pos}: not an ONNX model`);
  }
}

const decoder = new TextDecoder('utf-8', { fatal: false });

function parseEntry(src: ByteSource, start: number, length: number): [string, string] {
  const bytes = src.read(start, length);
  const entry = bufferSource(bytes);
  let key = '';
  let value = '';
  for (let pos = 0; pos < bytes.length; ) {
    const f = readField(entry, pos, bytes.length);
    if (f.wireType === 2 && f.field === 1) key = decoder.decode(bytes.subarray(f.start, f.start + f.length));
    else if (f.wireType === 2 && f.field === 2) value = decoder.decode(bytes.subarray(f.start, f.start + f.length));
    pos = f.next;
  }
  return [key, value];
}

function parse(src: ByteSource): Record<string, string> {
  if (src.size === 0) throw new OnnxFormatError('empty file: not an ONNX model');
  const metadata: Record<string, string> = {};
  let sawGraph = false;
  for (let pos = 0; pos < src.size; ) {
    const f = readField(src, pos, src.size);
    if (f.field === FIELD_GRAPH) {
      if (f.wireType !== 2) throw new OnnxFormatError('the graph field has the wrong wire type: not an ONNX model');
      sawGraph = true;
    } else if (f.field === FIELD_METADATA_PROPS && f.wireType === 2) {
      // Entries are small; a huge one means this is not really metadata.
      if (f.length > 64 * 1024 * 1024) throw new OnnxFormatError(`metadata entry of ${f.length} bytes: not an ONNX model`);
      const [key, value] = parseEntry(src, f.start, f.length);
      // Later entries win, as in a protobuf merge (how metadata is appended to a file).
      metadata[key] = value;
    }
    pos = f.next;
  }
  if (!sawGraph) throw new OnnxFormatError('no graph in the file: not an ONNX model (or truncated)');
  return metadata;
}

/** Metadata of an ONNX model held in memory. Throws OnnxFormatError on an invalid or truncated protobuf. */
export function parseOnnxMetadata(bytes: Uint8Array): Record<string, string> {
  return parse(bufferSource(bytes));
}

/** Metadata of an ONNX model file (synchronous; reads only the field headers and the metadata). */
export function readOnnxMetadataSync(file: string): Record<string, string> {
  const fd = openSync(file, 'r');
  try {
    return parse(fileSource(fd, fstatSync(fd).size));
  } catch (error) {
    if (error instanceof OnnxFormatError) throw new OnnxFormatError(`${file}: ${error.message}`);
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** Metadata of an ONNX model file. Throws OnnxFormatError on an invalid or truncated protobuf. */
export async function readOnnxMetadata(file: string): Promise<Record<string, string>> {
  return readOnnxMetadataSync(file);
}
