/** The encoder/decoder/joiner layout NeMo and icefall transducers share. */
import type { PackFolder } from './family.js';

export interface TransducerFiles {
  encoder: string;
  files: Record<string, string>;
  metadata: Record<string, string>;
}

/** The layout's files, a problem when incomplete, undefined when the folder has no encoder and joiner. */
export function transducerFiles(folder: PackFolder): TransducerFiles | { problem: string } | undefined {
  const encoders = folder.onnx.filter((n) => /^encoder/i.test(n));
  const joiners = folder.onnx.filter((n) => /^joiner/i.test(n));
  if (encoders.length === 0 || joiners.length === 0) return undefined;
  const encoder = folder.pickPreferred(encoders)!;
  const decoder = folder.pickPreferred(folder.onnx.filter((n) => /^decoder/i.test(n)));
  const joiner = folder.pickPreferred(joiners)!;
  if (!decoder || !folder.tokens) return { problem: 'transducer pack needs encoder, decoder and joiner .onnx files and tokens.txt' };
  const { metadata } = folder.metadataOf(encoder);
  const abs = (n: string) => folder.abs(n);
  return { encoder, metadata, files: { encoder: abs(encoder), decoder: abs(decoder), joiner: abs(joiner), tokens: abs(folder.tokens), ...folder.bpeVocab, ...folder.bpeModel } };
}

export function isNemo(folder: PackFolder, modelType: string | undefined): boolean {
  return /nemo|parakeet|canary/i.test(folder.lower) || /^EncDec/i.test(modelType ?? '');
}
