// Helpers shared by the playground's views: the API call with the visitor's key, a request's
// state (idle, working, done, failed) that clears what it owns, WAV building, the waveform and downloads.
const KEY_STORAGE = 'parley.apiKey';

export const $ = (id) => document.getElementById(id);

export const session = { key: localStorage.getItem(KEY_STORAGE) ?? '', models: [], packs: { installed: [], available: [] }, isAdmin: false };

export function rememberKey(key) {
  session.key = key;
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

/** The message of an error body, whatever the route family's shape. */
export function messageOf(body, fallback) {
  if (!body || typeof body !== 'object') return fallback;
  if (typeof body.error === 'object' && body.error?.message) return body.error.message;
  return body.message ?? body.detail ?? (typeof body.error === 'string' ? body.error : fallback);
}

export async function api(path, init = {}) {
  const response = await fetch(path, { ...init, headers: { ...(init.headers ?? {}), authorization: `Bearer ${session.key}` } });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = messageOf(await response.json(), message);
    } catch {}
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return response;
}

/** Calls onEvent(event, data) for each Server-Sent Event of a response body (data: its lines joined), until the body ends. */
export async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    buffered += value ?? '';
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const lines = buffered.slice(0, end).split('\n');
      buffered = buffered.slice(end + 2);
      const event = lines.find((l) => l.startsWith('event:'))?.slice(6).trim();
      onEvent(event, lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n'));
    }
    if (done) return;
  }
}

/** A WebSocket address on this server; browsers send no Authorization on an upgrade, so the key goes as `token`. */
export function socketUrl(path, query) {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}?${new URLSearchParams(query)}`;
}

export const json = async (path, init) => (await api(path, init)).json();

export function postJson(path, body, method = 'POST') {
  return api(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

export function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

/**
 * One request's state, shown in its status line (data-state idle|working|done|failed). begin()
 * clears everything the request owns, so a new request or a failure never leaves the previous
 * result on screen; the start controls are disabled and Stop enabled only while it works.
 */
export class RequestState {
  constructor(statusId, { start = [], stop = [], clear = () => {} } = {}) {
    this.status = $(statusId);
    this.start = start;
    this.stop = stop;
    this.clear = clear;
    this.status.dataset.state = 'idle';
    for (const id of stop) $(id).disabled = true;
  }

  get working() {
    return this.status.dataset.state === 'working';
  }

  show(state, text) {
    this.status.dataset.state = state;
    this.status.textContent = text;
    this.status.classList.toggle('error', state === 'failed');
    const working = state === 'working';
    for (const id of this.start) $(id).disabled = working;
    for (const id of this.stop) $(id).disabled = !working;
  }

  begin(text) {
    // Counted, so a watcher (the browser test) can tell this request's outcome from the previous one's.
    this.status.dataset.runs = String(Number(this.status.dataset.runs ?? 0) + 1);
    this.clear();
    this.show('working', text);
  }

  done(text) {
    this.show('done', text);
  }

  fail(error) {
    this.clear();
    this.show('failed', typeof error === 'string' ? error : error.message);
  }

  idle(text = '') {
    this.show('idle', text);
  }
}

/** 16-bit mono PCM pieces as one WAV file. */
export function wavBlob(pieces, sampleRate) {
  const length = pieces.reduce((n, p) => n + p.byteLength, 0);
  const header = new DataView(new ArrayBuffer(44));
  const text = (offset, s) => [...s].forEach((c, i) => header.setUint8(offset + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  header.setUint32(4, 36 + length, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  header.setUint32(16, 16, true);
  header.setUint16(20, 1, true);
  header.setUint16(22, 1, true);
  header.setUint32(24, sampleRate, true);
  header.setUint32(28, sampleRate * 2, true);
  header.setUint16(32, 2, true);
  header.setUint16(34, 16, true);
  text(36, 'data');
  header.setUint32(40, length, true);
  return new Blob([header, ...pieces], { type: 'audio/wav' });
}

/** Saves a blob under a name, as a browser download. */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = el('a', { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * An <audio> element with a waveform drawn on a canvas: the played part in the accent colour,
 * a click on the canvas seeks (the audio element's own controls do it from the keyboard).
 */
export class Player {
  constructor(audioId, canvasId) {
    this.audio = $(audioId);
    this.canvas = $(canvasId);
    this.peaks = null;
    this.url = '';
    this.audio.addEventListener('timeupdate', () => this.draw());
    this.audio.addEventListener('seeked', () => this.draw());
    this.canvas.addEventListener('click', (event) => {
      if (!this.audio.duration) return;
      const box = this.canvas.getBoundingClientRect();
      this.audio.currentTime = ((event.clientX - box.left) / box.width) * this.audio.duration;
    });
    new ResizeObserver(() => this.draw()).observe(this.canvas);
  }

  clear() {
    this.audio.pause();
    this.audio.removeAttribute('src');
    this.audio.load();
    if (this.url) URL.revokeObjectURL(this.url);
    this.url = '';
    this.peaks = null;
    this.audio.hidden = true;
    this.canvas.hidden = true;
  }

  /** Shows a blob, with the samples for the waveform (Float32Array, or decoded from the blob when absent). */
  async load(blob, samples) {
    this.clear();
    this.url = URL.createObjectURL(blob);
    this.audio.src = this.url;
    this.audio.hidden = false;
    this.canvas.hidden = false;
    if (!samples) {
      try {
        const context = new OfflineAudioContext(1, 1, 8000);
        samples = (await context.decodeAudioData(await blob.arrayBuffer())).getChannelData(0);
      } catch {
        samples = new Float32Array(0);
      }
    }
    this.setSamples(samples);
  }

  /** The waveform while audio is still arriving. */
  setSamples(samples) {
    this.canvas.hidden = false;
    const columns = 600;
    const peaks = new Float32Array(columns * 2);
    const per = Math.max(1, Math.floor(samples.length / columns));
    for (let c = 0; c < columns; c++) {
      let min = 0;
      let max = 0;
      for (let i = c * per; i < Math.min(samples.length, (c + 1) * per); i++) {
        if (samples[i] < min) min = samples[i];
        if (samples[i] > max) max = samples[i];
      }
      peaks[c * 2] = min;
      peaks[c * 2 + 1] = max;
    }
    this.peaks = peaks;
    this.draw();
  }

  draw() {
    const { canvas, peaks } = this;
    if (!peaks || canvas.hidden) return;
    const width = (canvas.width = Math.max(1, Math.round(canvas.clientWidth * devicePixelRatio)));
    const height = (canvas.height = Math.max(1, Math.round(canvas.clientHeight * devicePixelRatio)));
    const g = canvas.getContext('2d');
    const styles = getComputedStyle(canvas);
    const played = this.audio.duration ? this.audio.currentTime / this.audio.duration : 0;
    const columns = peaks.length / 2;
    const step = width / columns;
    for (let c = 0; c < columns; c++) {
      g.fillStyle = c / columns < played ? styles.getPropertyValue('--wave-played') : styles.getPropertyValue('--wave-rest');
      const top = ((1 - peaks[c * 2 + 1]) / 2) * height;
      const bottom = ((1 - peaks[c * 2]) / 2) * height;
      g.fillRect(c * step, top, Math.max(1, step - 0.5), Math.max(1, bottom - top));
    }
  }
}

/** Int16 little-endian bytes as float samples. */
export function int16ToFloat(bytes) {
  const samples = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1);
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i] / 32768;
  return out;
}

/** Fills a <select> with [value, label] pairs, keeping the selection where it still exists. */
export function fillSelect(select, entries) {
  const previous = select.value;
  select.replaceChildren(...entries.map(([value, label]) => new Option(label, value)));
  if (entries.some(([value]) => value === previous)) select.value = previous;
}

/** Disables a control and says why next to it (aria-describedby), or enables it again. */
export function explainDisabled(control, reasonId, reason) {
  control.disabled = Boolean(reason);
  if (reason && control.checked) control.checked = false;
  const note = $(reasonId);
  note.textContent = reason ?? '';
  note.hidden = !reason;
  if (reason) control.setAttribute('aria-describedby', reasonId);
  else control.removeAttribute('aria-describedby');
}

export const loadedKinds = () => new Set(session.packs.installed.filter((p) => p.state === 'loaded').map((p) => p.kind));
