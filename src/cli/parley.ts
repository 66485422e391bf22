#!/usr/bin/env node
/** Entry point of the `parley` command (bin/parley.js loads the compiled copy of this file). */
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    // `serve` keeps running after main() returns; other commands end with their code.
    if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
