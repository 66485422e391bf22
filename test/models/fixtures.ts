/** The six shared model packs (../shared/models) every models test uses. */
export const SHARED_PACKS = [
  'silero-vad-v5',
  'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile',
  'fake-piper-tones-en_US-16k',
  'fake-piper-tones-en_US-22k-2spk',
  'fake-pyannote-segmentation-energy',
  'handmade-fbank-stats-speaker-embedding',
];
