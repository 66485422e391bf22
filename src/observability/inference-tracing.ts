/**
 * Imported first by an inference process when the server traces: registers the same OTLP
 * exporter there, so the process's spans join the request's trace (their parent comes with each
 * task). Buffered spans are sent when the process is asked to leave.
 */
import { startTracing } from './tracing.js';

const tracing = await startTracing('parley-inference');
process.once('disconnect', () => void tracing?.flush().catch(() => undefined));
