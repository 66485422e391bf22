/**
 * The server's inference processes, one per model group. `layout` decides the groups:
 * - "by-capability": TTS packs in one process, everything transcription uses (VAD, recognisers,
 *   diarization, tagging) in another, so a crash in one never touches the other's requests;
 * - "shared": every model in one process, which saves a Node runtime's worth of memory.
 * A process starts when its first task arrives, so a group with no packs costs nothing.
 */
import { InferenceProcess, type InferenceProcessOptions, type InferenceProcessStatus } from './inference-process.js';

export type InferenceLayout = 'by-capability' | 'shared';
export type Capability = 'synthesis' | 'transcription';

export class Inference {
  private readonly processes = new Map<string, InferenceProcess>();

  constructor(
    private readonly layout: InferenceLayout,
    private readonly options: Omit<InferenceProcessOptions, 'name'>,
  ) {}

  /** The process that runs `capability`'s models. */
  for(capability: Capability): InferenceProcess {
    const name = this.layout === 'shared' ? 'inference' : capability;
    let process = this.processes.get(name);
    if (!process) {
      process = new InferenceProcess({ ...this.options, name });
      this.processes.set(name, process);
    }
    return process;
  }

  status(): InferenceProcessStatus[] {
    return [...this.processes.values()].map((p) => p.status());
  }

  async close(): Promise<void> {
    await Promise.all([...this.processes.values()].map((p) => p.close()));
  }
}
