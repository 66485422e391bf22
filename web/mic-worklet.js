// Runs in the AudioWorklet: the microphone's samples as 16-bit PCM, posted every 100 ms
// (at the context's rate, 16 kHz for live transcription), the frames the WebSocket carries.
const BLOCK_SECONDS = 0.1;

class Pcm16 extends AudioWorkletProcessor {
  constructor() {
    super();
    this.size = Math.round(sampleRate * BLOCK_SECONDS);
    this.block = new Int16Array(this.size);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0]?.[0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      const s = Math.max(-1, Math.min(1, channel[i]));
      this.block[this.filled++] = s < 0 ? s * 0x8000 : s * 0x7fff;
      if (this.filled === this.size) {
        // Transferred, not copied: the block's buffer is the main thread's from here on.
        this.port.postMessage(this.block.buffer, [this.block.buffer]);
        this.block = new Int16Array(this.size);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor('pcm16', Pcm16);
