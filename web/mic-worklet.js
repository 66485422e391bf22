// Runs in the AudioWorklet: the microphone's samples (float, mono, at the context's rate: 16 kHz
// for live transcription) posted every 100 ms; the page encodes each block as the socket asks.
const BLOCK_SECONDS = 0.1;

class MicBlocks extends AudioWorkletProcessor {
  constructor() {
    super();
    this.size = Math.round(sampleRate * BLOCK_SECONDS);
    this.block = new Float32Array(this.size);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0]?.[0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      this.block[this.filled++] = channel[i];
      if (this.filled === this.size) {
        // Transferred, not copied: the block is the main thread's from here on.
        this.port.postMessage(this.block, [this.block.buffer]);
        this.block = new Float32Array(this.size);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor('mic-blocks', MicBlocks);
