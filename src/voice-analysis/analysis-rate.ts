/**
 * Brings speech to the rate the acoustic baseline works at. 16 kHz keeps everything the features
 * need (F0 up to 800 Hz, spectral balance up to 5 kHz) and makes the F0 search 3x cheaper than at 48 kHz.
 */
import { resample } from '../audio/resample.js';

export const ANALYSIS_RATE = 16000;

/**
 * Speex quality 9: ~95% passband, close to the analysis' formant ceiling (formants.ts brings speech
 * to twice a 5000 Hz ceiling, and a lower passband edge would dim F4-F5 of long tracts). Higher
 * than synthesis' quality 4 because analysis reads spectra right up to the band edge.
 */
const ANALYSIS_RESAMPLER_QUALITY = 9;

export function toAnalysisRate(samples: Float32Array, sampleRate: number): Promise<Float32Array> {
  return resampleForAnalysis(samples, sampleRate, ANALYSIS_RATE);
}

/** `samples` at `fromRate` brought to `toRate`, band-limited below the lower Nyquist. */
export function resampleForAnalysis(samples: Float32Array, fromRate: number, toRate: number): Promise<Float32Array> {
  return resample(samples, fromRate, toRate, ANALYSIS_RESAMPLER_QUALITY);
}
