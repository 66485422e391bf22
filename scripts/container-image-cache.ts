/**
 * Fills buildah's cache for test/deploy/container.test.ts, as `npm test`'s set-up fills the model
 * cache: makes the stand-in base image and builds the Dockerfile once. Without it the test's first
 * build on a machine (a Debian root, then every layer: about 8 minutes on 2 idle cores, twice that
 * under load) would pass the time one test file may take; with it the test's build only redoes the
 * layers the sources changed.
 *   node --import tsx scripts/container-image-cache.ts
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestImage, ensureStandInBase } from '../test/helpers/container-image.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = (line: string) => process.stderr.write(`[setup] ${line}\n`);
const base = ensureStandInBase(log);
log(`stand-in base image ${base}; building the container image into buildah's cache`);
log(`container image built in ${(await buildTestImage(root)).toFixed(0)} s`);
