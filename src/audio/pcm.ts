/** Mono audio as float samples in [-1, 1]: the one in-memory audio shape inside Parley. */
export interface PcmAudio {
  samples: Float32Array;
  sampleRate: number;
}

/** Output formats of the synthesis endpoints. */
export type OutputFormat = 'pcm' | 'wav' | 'mp3' | 'mulaw';
export const outputFormats: readonly OutputFormat[] = ['pcm', 'wav', 'mp3', 'mulaw'];
