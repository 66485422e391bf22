/**
 * Types for `@echogarden/speex-resampler-wasm`, which ships none: an Emscripten factory exposing
 * the SpeexDSP resampler C API (speex/speex_resampler.h). Only what `resample.ts` calls is listed.
 */
declare module '@echogarden/speex-resampler-wasm' {
  export interface SpeexResamplerModule {
    HEAPF32: Float32Array;
    HEAPU32: Uint32Array;
    HEAP32: Int32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
    _speex_resampler_destroy(state: number): void;
    _speex_resampler_skip_zeros(state: number): number;
    _speex_resampler_get_input_latency(state: number): number;
    _speex_resampler_process_float(
      state: number,
      channel: number,
      input: number,
      inputLengthPointer: number,
      output: number,
      outputLengthPointer: number,
    ): number;
  }
  const createSpeexResamplerModule: () => Promise<SpeexResamplerModule>;
  export default createSpeexResamplerModule;
}
