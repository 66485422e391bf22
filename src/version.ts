import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (works from src/ under tsx and from dist/src/). */
export const version: string = (() => {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      /* try the next location */
    }
  }
  return '0.0.0';
})();
