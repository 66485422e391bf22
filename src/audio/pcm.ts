/** Mono audio as float samples in [-1, 1]: the one in-memory audio shape inside Parley. */
export interface PcmAudio {
  samples: Float32Array;
  sampleRate: number;
}

/**
 * Uncompressed audio (WAV, AIFF, raw PCM) whose header has been read and checked: its length is
 * known before a sample is decoded, and it is decoded a block at a time.
 */
export interface PcmSource {
  sampleRate: number;
  /** Whole sample frames present in the bytes. */
  frames: number;
  /** Frames [from, to) mixed down to mono floats in [-1, 1]. */
  read(from: number, to: number): Float32Array;
}

/** Output formats of the synthesis endpoints. */
export type OutputFormat = 'pcm' | 'wav' | 'mp3' | 'mulaw' | 'alaw';
export const outputFormats: readonly OutputFormat[] = ['pcm', 'wav', 'mp3', 'mulaw', 'alaw'];
