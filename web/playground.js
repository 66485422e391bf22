// The Parley playground: plain DOM and fetch, no framework. Everything goes through the same
// OpenAI-compatible API (/v1) any client uses, with the key the visitor pastes.
const KEY_STORAGE = 'parley.apiKey';
const SAMPLE_RATE = 24000; // response_format pcm: 24 kHz s16le mono, as OpenAI documents it
const MIN_CHUNK_SECONDS = 0.1; // smaller pieces are gathered first, so playback does not stutter

const $ = (id) => document.getElementById(id);
let apiKey = localStorage.getItem(KEY_STORAGE) ?? '';
let voices = [];
let speaking; // { controller, context }

function setStatus(id, text, isError = false) {
  const el = $(id);
  el.textContent = text;
  el.classList.toggle('error', isError);
}

async function api(path, init = {}) {
  const response = await fetch(path, { ...init, headers: { ...(init.headers ?? {}), authorization: `Bearer ${apiKey}` } });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = (await response.json()).error?.message ?? message;
    } catch {}
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return response;
}

// --- key -------------------------------------------------------------------
$('key').value = apiKey;
$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  apiKey = $('key').value.trim();
  localStorage.setItem(KEY_STORAGE, apiKey);
  await loadAll();
});
$('forget-key').addEventListener('click', () => {
  localStorage.removeItem(KEY_STORAGE);
  apiKey = '';
  $('key').value = '';
  setStatus('key-status', 'Key forgotten.');
});

async function loadAll() {
  if (!apiKey) return setStatus('key-status', 'Paste a key to start (parley keys create, or the key printed at first start).');
  setStatus('key-status', 'Checking the key…');
  try {
    const { data } = await (await api('/v1/models')).json();
    setStatus('key-status', `Key accepted: ${data.length} models.`);
    fillModels(data);
    await Promise.all([loadVoices(), loadPacks()]);
  } catch (error) {
    setStatus('key-status', error.status === 401 ? 'This key is not valid.' : `Could not reach Parley: ${error.message}`, true);
  }
}

// --- speech ------------------------------------------------------------------
function fillModels(models) {
  const select = $('model');
  const speech = models.filter((m) => m.parley?.task === 'speech' && m.parley.kind !== 'alias');
  select.replaceChildren(...speech.map((m) => new Option(m.parley.kind === 'generation' ? m.id : `${m.id} (pack)`, m.id)));
  select.disabled = speech.length === 0;
}

async function loadVoices() {
  const model = $('model').value;
  if (!model) return;
  ({ voices } = await (await api(`/v1/audio/voices?model=${encodeURIComponent(model)}`)).json());
  const select = $('voice');
  select.replaceChildren(...voices.map((v) => new Option(v.aliases.length ? `${v.name} — ${v.aliases.join(', ')}` : v.name, v.id)));
  select.disabled = voices.length === 0;
  $('speak').disabled = voices.length === 0;
  showVoiceTags();
}

function showVoiceTags() {
  const voice = voices.find((v) => v.id === $('voice').value);
  const tags = voice ? [...voice.languages, voice.gender, voice.accent, voice.engine, `${voice.sample_rate} Hz`, ...voice.aliases.map((a) => `OpenAI: ${a}`)] : [];
  $('voice-tags').replaceChildren(...tags.map((t) => Object.assign(document.createElement('li'), { textContent: t })));
}

$('model').addEventListener('change', () => loadVoices().catch((e) => setStatus('speech-status', e.message, true)));
$('voice').addEventListener('change', showVoiceTags);
$('speed').addEventListener('input', () => ($('speed-value').value = Number($('speed').value).toFixed(1)));
$('stop').addEventListener('click', stopSpeaking);

function stopSpeaking() {
  speaking?.controller.abort();
  speaking?.context.close();
  speaking = undefined;
  $('stop').disabled = true;
}

$('speech-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  stopSpeaking();
  const context = new AudioContext({ sampleRate: SAMPLE_RATE });
  await context.resume();
  const controller = new AbortController();
  speaking = { controller, context };
  $('stop').disabled = false;
  $('ttfa').textContent = '…';
  $('ttfa').dataset.ms = '';
  $('audio-seconds').dataset.played = '0';
  setStatus('speech-status', 'Synthesising…');
  const started = performance.now();
  let playAt = 0;
  let received = 0;
  try {
    const response = await api('/v1/audio/speech', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: $('model').value, voice: $('voice').value, input: $('text').value, speed: Number($('speed').value), response_format: 'pcm' }),
      signal: controller.signal,
    });
    const reader = response.body.getReader();
    let pending = new Uint8Array(0);
    const play = (bytes) => {
      const samples = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
      const buffer = context.createBuffer(1, samples.length, SAMPLE_RATE);
      const channel = buffer.getChannelData(0);
      for (let i = 0; i < samples.length; i++) channel[i] = samples[i] / 32768;
      const source = context.createBufferSource();
      source.buffer = buffer;
      source.connect(context.destination);
      // Counted as each piece finishes sounding: proof the audio really played, not just arrived.
      source.addEventListener('ended', () => {
        const el = $('audio-seconds');
        el.dataset.played = String(Number(el.dataset.played ?? 0) + buffer.duration);
      });
      const at = Math.max(playAt, context.currentTime + 0.02);
      source.start(at);
      if (playAt === 0) {
        // Until the first sample sounds: the request, the first synthesis, and the scheduling margin.
        const ms = Math.round(performance.now() - started + (at - context.currentTime) * 1000);
        $('ttfa').textContent = `${ms} ms`;
        $('ttfa').dataset.ms = String(ms);
      }
      playAt = at + buffer.duration;
      received += samples.length;
      $('audio-seconds').textContent = `${(received / SAMPLE_RATE).toFixed(2)} s`;
      $('audio-seconds').dataset.seconds = String(received / SAMPLE_RATE);
    };
    for (;;) {
      const { done, value } = await reader.read();
      if (value) {
        const joined = new Uint8Array(pending.length + value.length);
        joined.set(pending);
        joined.set(value, pending.length);
        pending = joined;
      }
      const whole = pending.length - (pending.length % 2);
      if (whole >= MIN_CHUNK_SECONDS * SAMPLE_RATE * 2 || (done && whole > 0)) {
        play(pending.slice(0, whole));
        pending = pending.slice(whole);
      }
      if (done) break;
    }
    setStatus('speech-status', `Done: ${(received / SAMPLE_RATE).toFixed(2)} s of audio.`);
  } catch (error) {
    if (error.name !== 'AbortError') setStatus('speech-status', error.message, true);
  }
});

// --- transcription -------------------------------------------------------------
const drop = $('drop');
drop.addEventListener('dragover', (event) => {
  event.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (event) => {
  event.preventDefault();
  drop.classList.remove('over');
  const file = event.dataTransfer.files[0];
  if (file) transcribe(file, file.name);
});
$('audio-file').addEventListener('change', () => {
  const file = $('audio-file').files[0];
  if (file) transcribe(file, file.name);
});

let recorder;
$('record').addEventListener('click', async () => {
  if (recorder?.state === 'recording') return recorder.stop();
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const chunks = [];
    recorder = new MediaRecorder(stream);
    recorder.addEventListener('dataavailable', (event) => chunks.push(event.data));
    recorder.addEventListener('stop', () => {
      stream.getTracks().forEach((t) => t.stop());
      $('record').textContent = 'Record from microphone';
      const blob = new Blob(chunks, { type: recorder.mimeType || 'audio/webm' });
      transcribe(blob, 'recording.webm');
    });
    recorder.start();
    $('record').textContent = 'Stop recording and transcribe';
    setStatus('stt-status', 'Recording…');
  } catch (error) {
    setStatus('stt-status', `The microphone is not available: ${error.message}`, true);
  }
});

async function transcribe(blob, filename) {
  if (!apiKey) return setStatus('stt-status', 'Paste a key first.', true);
  setStatus('stt-status', `Transcribing ${filename}…`);
  const form = new FormData();
  form.append('file', blob, filename);
  form.append('model', 'whisper-1');
  form.append('response_format', 'verbose_json');
  form.append('timestamp_granularities[]', 'word');
  form.append('timestamp_granularities[]', 'segment');
  for (const [box, field] of [['diarize', 'diarize'], ['gender', 'gender_detection'], ['age', 'age_detection'], ['emotion', 'emotion_detection']]) {
    if ($(box).checked) form.append(field, 'true');
  }
  const started = performance.now();
  try {
    const result = await (await api('/v1/audio/transcriptions', { method: 'POST', body: form })).json();
    showTranscript(result);
    setStatus('stt-status', `Transcribed ${result.duration.toFixed(1)} s of audio in ${Math.round(performance.now() - started)} ms.`);
  } catch (error) {
    setStatus('stt-status', error.message, true);
  }
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function showTranscript(result) {
  $('transcript-box').hidden = false;
  $('transcript').textContent = result.text || '(no speech found)';
  const analysis = [['Language', result.language], ['Duration', `${result.duration} s`]];
  const extra = result.parley ?? {};
  if (extra.gender) analysis.push(['Gender', extra.gender]);
  if (extra.age) analysis.push(['Age', extra.age]);
  if (extra.emotions) analysis.push(['Emotions', Object.entries(extra.emotions).map(([k, v]) => `${k} ${Number(v).toFixed(2)}`).join(', ')]);
  for (const s of extra.speakers ?? []) analysis.push([s.speaker, [s.gender, s.age].filter(Boolean).join(', ') || '–']);
  if (extra.analyzers) analysis.push(['Analyzers', Object.entries(extra.analyzers).map(([k, v]) => `${k}: ${v}`).join(', ')]);
  $('analysis').replaceChildren(...analysis.flatMap(([k, v]) => [Object.assign(document.createElement('dt'), { textContent: k }), Object.assign(document.createElement('dd'), { textContent: v })]));
  $('words').tBodies[0].replaceChildren(
    ...(result.words ?? []).map((w) => {
      const tr = document.createElement('tr');
      tr.append(cell(w.word), cell(w.start.toFixed(2), 'num'), cell(w.end.toFixed(2), 'num'), cell(w.speaker ?? ''));
      return tr;
    }),
  );
}

// --- packs -----------------------------------------------------------------------
async function loadPacks() {
  const { installed, available } = await (await api('/v1/packs')).json();
  const row = (p, state) => {
    const tr = document.createElement('tr');
    const name = cell(p.id);
    if (p.description) name.title = p.description;
    tr.append(name, cell(p.kind), cell(p.languages.join(', ')), cell(p.reason ? `${state}: ${p.reason}` : state));
    return tr;
  };
  $('packs').tBodies[0].replaceChildren(...installed.map((p) => row(p, p.state)), ...available.map((p) => row(p, 'available')));
}

loadAll();
