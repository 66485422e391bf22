import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import type { ModelGeneration } from '../engines/types.js';
import { buildEngines } from '../compose/engines.js';

/**
 * `parley voices [--model M]`: the catalogue the server would offer with the installed packs.
 * It builds the engines only (the catalogue is theirs): no database, no job runner, so a server
 * running on the same data is left alone.
 */
export async function voicesCommand(config: Config, argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { model: { type: 'string', default: 'tts-v2' }, json: { type: 'boolean' } } });
  const model = values.model as ModelGeneration;
  const engines = await buildEngines(config);
  try {
    const voices = engines.voices.list(model);
    if (values.json) out.write(JSON.stringify(voices) + '\n');
    else for (const v of voices) out.write(`${v.id}\t${v.displayName}\t${v.languages.join(',')}\t${v.gender}\t${v.sampleRate} Hz\t${v.engine}\n`);
    return 0;
  } finally {
    await engines.close();
  }
}
