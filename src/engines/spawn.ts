/**
 * The one way Parley starts a worker thread or a child process running one of its own modules.
 * A module is named by the URL of its compiled `.js` next to the caller (`new URL('./x.js',
 * import.meta.url)`); when only the `.ts` source exists (tests and benches under tsx) the entry
 * goes through tsx instead.
 */
import { fork, type ChildProcess, type ForkOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

type Entry = { kind: 'compiled'; file: string } | { kind: 'source'; file: string; tsx?: { api: string; loader: string } };

function resolveEntry(compiled: URL): Entry {
  const file = fileURLToPath(compiled);
  if (existsSync(file)) return { kind: 'compiled', file };
  const source = file.replace(/\.js$/, '.ts');
  try {
    return { kind: 'source', file: source, tsx: { api: import.meta.resolve('tsx/esm/api'), loader: import.meta.resolve('tsx') } };
  } catch {
    return { kind: 'source', file: source }; // a Node that strips types itself
  }
}

/** A worker thread running the module; `workerData` and the other options pass through. */
export function startWorkerThread(compiled: URL, options: WorkerOptions = {}): Worker {
  const entry = resolveEntry(compiled);
  if (entry.kind === 'compiled' || !entry.tsx) return new Worker(entry.file, options);
  // Node 20 does not apply tsx's --import hooks to a worker's entry file, so the worker registers
  // tsx itself before importing the .ts module.
  const href = new URL(`file://${entry.file}`).href;
  const bootstrap = `import(${JSON.stringify(entry.tsx.api)}).then((api) => { api.register(); return import(${JSON.stringify(href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** The argv (after the node binary) that runs the module as a program. */
export function childArgs(compiled: URL, args: string[] = []): string[] {
  const entry = resolveEntry(compiled);
  if (entry.kind === 'source' && entry.tsx) return ['--import', entry.tsx.loader, entry.file, ...args];
  return [entry.file, ...args];
}

/**
 * A child process running the module with an IPC channel. `serialization: 'advanced'` is the
 * default here: typed arrays cross as their raw bytes (V8's serializer), not as JSON.
 *
 * glibc gives each allocating thread its own malloc arena (up to 8 per core) and seldom returns
 * their freed pages, so a process whose worker threads allocate and free large buffers grows for
 * minutes: a 10-minute soak grew 22% with the default, 1.6% with two arenas. Children get two
 * unless the environment says otherwise (the variable is read at process start, so the server's
 * own process takes it from `npm start`).
 */
export function forkChild(compiled: URL, args: string[] = [], options: ForkOptions = {}): ChildProcess {
  const entry = resolveEntry(compiled);
  const execArgv = entry.kind === 'source' && entry.tsx ? ['--import', entry.tsx.loader] : [];
  const env = { MALLOC_ARENA_MAX: '2', ...(options.env ?? process.env) };
  return fork(entry.file, args, { serialization: 'advanced', execArgv, ...options, env });
}
