// Transcription: a file (/api/v1/stt/get_text, or OpenAI's /v1/audio/transcriptions) or a URL
// (/api/v1/stt/get_text), with every option of the route (those needing a pack that is not loaded,
// or that the chosen route lacks, are disabled with the reason beside them); with a webhook URL
// the file runs as a job whose state is followed here. The transcript's words seek the audio,
// speakers are coloured, the analysis is drawn as bars; SRT, VTT and JSON export. Live: the
// microphone streamed over the WebSocket in the chosen encoding, partials growing in place.
import { $, api, el, explainDisabled, fillSelect, json, loadedKinds, Player, postJson, RequestState, saveBlob, session, socketUrl } from './lib.js';
import { createLiveEncoder } from './live-encoders.js';
import { install as installPack } from './packs.js';

const LIVE_RATE = 16000;
const JOB_POLL_MS = 1000;
/** Controls of the text options: query field, and how its value is read. */
const TEXT_OPTIONS = [
  ['keywords', 'keywords', (c) => c.value.trim() || undefined],
  ['numerals', 'numerals', (c) => (c.value === 'auto' ? undefined : c.value)],
  ['stt-format', 'format', (c) => (c.checked ? 'true' : undefined)],
  ['redact-pii', 'redact_pii', (c) => (c.checked ? 'true' : undefined)],
  ['redact-pci', 'redact_pci', (c) => (c.checked ? 'true' : undefined)],
];
const CUE_PAUSE_SECONDS = 0.7;
const CUE_MAX_WORDS = 12;
const LANGUAGE_DETECTING = ['asr-whisper', 'asr-sense-voice'];
const ANALYSIS = [
  ['diarize', 'diarize'],
  ['gender', 'gender_detection'],
  ['age', 'age_detection'],
  ['emotion', 'emotion_detection'],
];

const player = new Player('stt-audio', 'stt-wave');
let result; // the normalised transcript on screen
let live; // { socket, context, stream, node, encoder }
let transcriptions = 0; // the latest file or URL request: a job followed for an older one stops

const state = new RequestState('stt-status', {
  start: ['audio-file', 'transcribe-url'],
  clear: () => {
    result = undefined;
    player.clear();
    $('transcript-box').hidden = true;
    $('transcript').replaceChildren();
    $('analysis').replaceChildren();
    $('chart').replaceChildren();
    $('words').tBodies[0].replaceChildren();
  },
});
const liveState = new RequestState('live-status', {
  start: ['live-start'],
  stop: ['live-stop'],
  clear: () => {
    $('live-sent').textContent = '0.0 s';
    $('live-received').textContent = '0';
    $('live-finals').replaceChildren();
    $('live-partial').textContent = '';
    $('live-full').textContent = '';
    $('live-full').hidden = true;
    $('live-events').replaceChildren();
  },
});

/** What the installed packs allow: languages of the loaded recognisers, and diarization. */
export function showTranscriptionOptions() {
  const kinds = loadedKinds();
  const languages = session.models.find((m) => m.id === 'whisper-1')?.parley.languages ?? [];
  const entries = languages.map((l) => [l, l]);
  if (LANGUAGE_DETECTING.some((k) => kinds.has(k))) entries.push(['multi', 'multi (detect)']);
  fillSelect($('stt-language'), entries.length ? entries : [['en', 'en']]);
  const diarizable = kinds.has('diarization-segmentation') && kinds.has('speaker-embedding');
  const diarizeReason = diarizable ? undefined : 'Speakers needs a diarization pack (segmentation and speaker embedding) installed and loaded: see Model packs.';
  explainDisabled($('diarize'), 'diarize-reason', diarizeReason);
  explainDisabled($('live-diarize'), 'live-diarize-reason', diarizeReason);
  showRouteOptions();
  showEncodingOptions();
  // What is missing (the VAD, a recogniser) and what to install: the server's own answer, as a request would get it.
  const { missing = [], message } = session.packs.transcription ?? {};
  const reason = missing.length ? message : undefined;
  for (const id of ['audio-file', 'transcribe-url', 'live-start']) $(id).disabled = Boolean(reason);
  $('live-start').dataset.noRecognizer = String(Boolean(reason));
  $('stt-reason').textContent = reason ?? '';
  // An admin key may install the recommended packs from here (the admin install route).
  const installable = session.isAdmin ? missing.filter((m) => m.pack) : [];
  $('stt-install').replaceChildren(
    ...installable.map((m) => {
      const button = el('button', { type: 'button', textContent: `Install ${m.pack} (${m.role === 'vad' ? 'voice activity detection' : 'recommended recogniser'})` });
      button.addEventListener('click', () => installPack(m.pack));
      return button;
    }),
  );
  $('stt-install').hidden = installable.length === 0;
}

const openAiRoute = () => $('route-openai').checked;

/** OpenAI's route takes `prompt`; Parley's takes keywords, the text options and webhook_url. */
function showRouteOptions() {
  const openAi = openAiRoute();
  const parleyOnly = 'OpenAI\'s route takes a prompt (its words boosted as keywords) and none of these: choose the Parley route for them.';
  for (const [id] of TEXT_OPTIONS) explainDisabled($(id), 'text-options-reason', openAi ? parleyOnly : undefined);
  // One of the two is always disabled: the line says why.
  const [off, on] = openAi ? [['webhook-url', 'webhook-extra'], ['prompt']] : [['prompt'], ['webhook-url', 'webhook-extra']];
  for (const id of off) explainDisabled($(id), 'route-reason', openAi ? 'A webhook is a field of the Parley route.' : 'prompt is a field of OpenAI\'s route: on the Parley route write keywords.');
  for (const id of on) {
    $(id).disabled = false;
    $(id).removeAttribute('aria-describedby');
  }
}

/** Opus from the microphone needs the browser's WebCodecs encoder. */
function showEncodingOptions() {
  const opus = ['opus', 'ogg_opus'].includes($('live-encoding').value);
  const reason = opus && typeof AudioEncoder === 'undefined' ? 'This browser has no Opus encoder (WebCodecs, on https or localhost only): choose a PCM or G.711 encoding.' : undefined;
  $('live-encoding-reason').textContent = reason ?? '';
  $('live-encoding-reason').hidden = !reason;
  // Enabled only once a key found a recogniser (noRecognizer is set then), and never while listening.
  $('live-start').disabled = Boolean(reason) || $('live-start').dataset.noRecognizer !== 'false' || liveState.working;
}

function options() {
  const chosen = {};
  for (const [box, field] of ANALYSIS) if ($(box).checked) chosen[field] = 'true';
  return { language: $('stt-language').value, ...chosen };
}

/** keywords, numerals, format and redaction, as the Parley routes and the live socket take them; a disabled one is not sent. */
function textOptions() {
  const chosen = {};
  for (const [id, field, read] of TEXT_OPTIONS) {
    const value = $(id).disabled ? undefined : read($(id));
    if (value !== undefined) chosen[field] = value;
  }
  return chosen;
}

/** The transcript of a Parley route's answer (or of a job's result), as the view shows it. */
function fromParley(body) {
  return { text: body.transcription, language: body.language, duration: body.duration, words: body.words ?? [], age: body.age, gender: body.gender, emotions: body.emotions, speakers: body.speakers, analyzers: body.metadata?.analyzers };
}

async function transcribeFile(file) {
  if (!file) return;
  if (!openAiRoute()) return transcribeFileWithParley(file);
  const run = ++transcriptions;
  state.begin(`Transcribing ${file.name}…`);
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('model', 'whisper-1');
  form.append('response_format', 'verbose_json');
  form.append('timestamp_granularities[]', 'word');
  form.append('timestamp_granularities[]', 'segment');
  for (const [field, value] of Object.entries(options())) form.append(field, value);
  if ($('prompt').value.trim()) form.append('prompt', $('prompt').value.trim());
  const started = performance.now();
  try {
    const body = await (await api('/v1/audio/transcriptions', { method: 'POST', body: form })).json();
    if (run !== transcriptions) return;
    show({ text: body.text, language: body.language, duration: body.duration, words: body.words ?? [], ...(body.parley ?? {}) }, file.name);
    await player.load(file);
    state.done(`Transcribed ${file.name}: ${body.duration.toFixed(1)} s of audio in ${Math.round(performance.now() - started)} ms.`);
  } catch (error) {
    if (run === transcriptions) state.fail(error);
  }
}

/** The query of the Parley route: analysis, text options, word times, and webhook_url when given. */
function parleyQuery(filename) {
  const webhook = $('webhook-url').disabled ? '' : $('webhook-url').value.trim();
  // The extra pairs go only with a webhook (alone they are a 400).
  const extra = webhook && $('webhook-extra').value.trim();
  return new URLSearchParams({
    ...options(),
    ...textOptions(),
    word_timestamps: 'true',
    ...(webhook && { webhook_url: webhook }),
    ...(extra && { webhook_extra: extra }),
    ...(filename && { filename: filename.slice(0, 255) }),
  });
}

async function transcribeFileWithParley(file) {
  const run = ++transcriptions;
  state.begin(`Transcribing ${file.name}…`);
  // The route reads audio/* bodies; the bytes themselves say the format.
  const type = file.type.startsWith('audio/') ? file.type : file.type === 'video/webm' ? 'audio/webm' : 'audio/octet-stream';
  const started = performance.now();
  try {
    const response = await api(`/api/v1/stt/get_text?${parleyQuery(file.name)}`, { method: 'POST', headers: { 'content-type': type }, body: file });
    const body = await response.json();
    if (run !== transcriptions) return;
    if (body.status === 'processing') return await followJob(run, body.request_id, file.name, file);
    show(fromParley(body), file.name);
    await player.load(file);
    state.done(`Transcribed ${file.name}: ${body.duration.toFixed(1)} s of audio in ${Math.round(performance.now() - started)} ms.`);
  } catch (error) {
    if (run === transcriptions) state.fail(error);
  }
}

/** A transcription run as a job: its state read until the webhook has its result (or gave up). */
async function followJob(run, id, name, audio) {
  let shown = false;
  for (;;) {
    const job = await json(`/api/v1/stt/jobs/${encodeURIComponent(id)}`);
    if (run !== transcriptions) return;
    if (job.result && !shown) {
      show(fromParley(job.result), name);
      if (audio) await player.load(audio);
      shown = true;
    }
    const attempt = job.attempts.at(-1);
    const delivery = attempt ? `, delivery attempt ${attempt.attempt}: ${attempt.status_code ? `HTTP ${attempt.status_code}` : attempt.error}` : '';
    if (job.state === 'succeeded') return state.done(`Job ${id} done: ${name} transcribed and posted to ${job.webhook_url}${delivery}.`);
    if (job.state === 'failed') return state.fail(`Job ${id} failed: ${job.error ?? job.last_error ?? 'no reason given'}${delivery}.`);
    state.show('working', `Job ${id}: ${job.state}${delivery}…`);
    await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
  }
}

async function transcribeUrl(url) {
  const run = ++transcriptions;
  state.begin(`Fetching and transcribing ${url}…`);
  const started = performance.now();
  const name = url.split('/').pop() || 'audio';
  try {
    const body = await (await postJson(`/api/v1/stt/get_text?${parleyQuery()}`, { url })).json();
    if (run !== transcriptions) return;
    if (body.status === 'processing') return await followJob(run, body.request_id, name);
    show(fromParley(body), name);
    state.done(`Transcribed ${url}: ${body.duration.toFixed(1)} s of audio in ${Math.round(performance.now() - started)} ms.`);
  } catch (error) {
    if (run === transcriptions) state.fail(error);
  }
}

function cell(text, className) {
  return el('td', { textContent: text, className: className ?? '' });
}

/** Shows a transcript: {text, language, duration, words[{word,start,end,speaker}], age, gender, emotions, speakers, analyzers}. */
function show(transcript, name) {
  result = { ...transcript, name };
  $('transcript-box').hidden = false;
  const speakers = [...new Set(transcript.words.map((w) => w.speaker).filter(Boolean))];
  const colour = (speaker) => `speaker-${speakers.indexOf(speaker) % 6}`;
  const words = transcript.words.map((w, i) => {
    const button = el('button', { type: 'button', className: `word ${w.speaker ? colour(w.speaker) : ''}`, textContent: w.word, title: `${w.start.toFixed(2)} s${w.speaker ? `, ${w.speaker}` : ''}` });
    button.dataset.index = String(i);
    button.addEventListener('click', () => {
      if (!player.url) return;
      player.audio.currentTime = w.start;
      player.audio.play().catch(() => {});
    });
    return button;
  });
  if (words.length) $('transcript').replaceChildren(...words.flatMap((w) => [w, ' ']));
  else $('transcript').textContent = transcript.text || '(no speech found)';
  const analysis = [['Language', transcript.language], ['Duration', `${transcript.duration} s`]];
  if (transcript.gender) analysis.push(['Gender', transcript.gender]);
  if (transcript.age) analysis.push(['Age', transcript.age]);
  for (const s of transcript.speakers ?? []) analysis.push([s.speaker, [s.gender, s.age].filter(Boolean).join(', ') || '–']);
  if (transcript.analyzers) analysis.push(['Analyzers', Object.entries(transcript.analyzers).map(([k, v]) => `${k}: ${v}`).join(', ')]);
  $('analysis').replaceChildren(...analysis.flatMap(([k, v]) => [el('dt', { textContent: k }), el('dd', { textContent: v })]));
  showChart(transcript, speakers, colour);
  $('words').tBodies[0].replaceChildren(
    ...transcript.words.map((w) => {
      const tr = el('tr');
      tr.append(cell(w.word), cell(w.start.toFixed(2), 'num'), cell(w.end.toFixed(2), 'num'), cell(w.speaker ?? '', w.speaker ? colour(w.speaker) : ''));
      return tr;
    }),
  );
}

/** Bars (<meter>, read out by screen readers with their label): emotion scores and each speaker's share of the talk. */
function showChart(transcript, speakers, colour) {
  const bars = [];
  const bar = (label, value, className = '') => {
    const id = `bar-${bars.length}`;
    bars.push(el('div', { className: 'bar' }, el('label', { htmlFor: id, textContent: label }), el('meter', { id, min: 0, max: 1, value, className }), el('span', { textContent: `${Math.round(value * 100)}%` })));
  };
  for (const [emotion, score] of Object.entries(transcript.emotions ?? {})) bar(`Emotion: ${emotion}`, Number(score));
  if (speakers.length) {
    const talk = new Map(speakers.map((s) => [s, 0]));
    for (const w of transcript.words) if (w.speaker) talk.set(w.speaker, talk.get(w.speaker) + (w.end - w.start));
    const total = [...talk.values()].reduce((a, b) => a + b, 0) || 1;
    for (const [speaker, seconds] of talk) bar(`Talk time: ${speaker}`, seconds / total, colour(speaker));
  }
  $('chart').replaceChildren(...bars);
  $('chart-title').hidden = bars.length === 0;
}

/** Cues of at most CUE_MAX_WORDS words, split at pauses and speaker changes. */
function cues() {
  if (!result.words.length) return result.text ? [{ start: 0, end: result.duration, text: result.text }] : [];
  const out = [];
  let cue;
  for (const w of result.words) {
    if (!cue || w.start - cue.end > CUE_PAUSE_SECONDS || cue.words.length >= CUE_MAX_WORDS || w.speaker !== cue.speaker) {
      cue = { start: w.start, end: w.end, speaker: w.speaker, words: [] };
      out.push(cue);
    }
    cue.words.push(w.word);
    cue.end = w.end;
  }
  return out.map((c) => ({ start: c.start, end: c.end, text: (c.speaker ? `[${c.speaker}] ` : '') + c.words.join(' ') }));
}

function timestamp(seconds, separator) {
  const ms = Math.round(seconds * 1000);
  const pad = (n, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

function exportAs(format) {
  if (!result) return;
  const base = result.name.replace(/\.[^.]*$/, '') || 'transcript';
  if (format === 'json') {
    const { name, ...body } = result;
    return saveBlob(new Blob([JSON.stringify(body, null, 2)], { type: 'application/json' }), `${base}.json`);
  }
  const list = cues();
  const text =
    format === 'srt'
      ? list.map((c, i) => `${i + 1}\n${timestamp(c.start, ',')} --> ${timestamp(c.end, ',')}\n${c.text}\n`).join('\n')
      : `WEBVTT\n\n${list.map((c) => `${timestamp(c.start, '.')} --> ${timestamp(c.end, '.')}\n${c.text}\n`).join('\n')}`;
  saveBlob(new Blob([text], { type: format === 'srt' ? 'application/x-subrip' : 'text/vtt' }), `${base}.${format}`);
}

/** The word being spoken marked (aria-current) as the audio plays. */
player.audio.addEventListener('timeupdate', () => {
  if (!result) return;
  const t = player.audio.currentTime;
  for (const button of $('transcript').querySelectorAll('button.word')) {
    const w = result.words[Number(button.dataset.index)];
    if (w.start <= t && t < w.end) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
});

// --- live --------------------------------------------------------------------------
async function startLive() {
  liveState.begin('Starting the microphone…');
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
    const context = new AudioContext({ sampleRate: LIVE_RATE });
    await context.audioWorklet.addModule('/mic-worklet.js');
    const node = new AudioWorkletNode(context, 'mic-blocks');
    const encoding = $('live-encoding').value;
    const query = liveQuery(encoding);
    const socket = new WebSocket(socketUrl('/api/v1/stt/get_text', { token: session.key, ...query }));
    socket.binaryType = 'arraybuffer';
    live = { socket, context, stream, node, diarize: query.diarize === 'true' };
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('close', (event) => reject(new Error(`The server refused the live transcription (${event.code}${event.reason ? `: ${event.reason}` : ''}).`)), { once: true });
    });
    // Made once the socket is open: an Ogg stream's header pages go first.
    const encoder = await createLiveEncoder(encoding, LIVE_RATE, (bytes) => socket.readyState === WebSocket.OPEN && socket.send(bytes), (error) => liveState.show('failed', `The Opus encoder failed: ${error.message}`));
    live.encoder = encoder;
    socket.addEventListener('message', (event) => onLiveMessage(JSON.parse(event.data)));
    socket.addEventListener('close', (event) => {
      if (live?.socket !== socket) return;
      stopAudio();
      live = undefined;
      if (event.code === 1000 || event.code === 1005) liveState.done(`Stopped. ${$('live-finals').childElementCount} final results.`);
      else liveState.show('failed', `The live transcription ended: ${event.reason || `code ${event.code}`}`);
    });
    let sent = 0;
    node.port.addEventListener('message', (event) => {
      if (socket.readyState !== WebSocket.OPEN || live?.socket !== socket || live.finishing) return;
      encoder.push(event.data);
      sent += event.data.length;
      $('live-sent').textContent = `${(sent / LIVE_RATE).toFixed(1)} s`;
    });
    node.port.start();
    context.createMediaStreamSource(stream).connect(node);
    liveState.show('working', 'Listening… speak now.');
  } catch (error) {
    stopAudio();
    live?.socket.close();
    live = undefined;
    liveState.fail(error.name === 'NotAllowedError' ? 'The microphone was not allowed.' : error);
  }
}

/** The socket's query: the encoding, the language and text options, and the live options. */
function liveQuery(encoding) {
  const on = (id) => ($(id).checked ? 'true' : 'false');
  return {
    encoding,
    sample_rate: String(LIVE_RATE),
    language: $('stt-language').value,
    word_timestamps: 'true',
    ...textOptions(),
    diarize: on('live-diarize'),
    vad_events: on('vad-events'),
    eou_timeout_ms: String(Math.round(Number($('eou').value) || 800)),
    endpointing: on('endpointing'),
    sentence_timestamps: on('sentence-timestamps'),
    full_transcript: on('full-transcript'),
  };
}

const seconds = (s) => `${Number(s).toFixed(2)} s`;

function onLiveMessage(message) {
  $('live-received').textContent = String(Number($('live-received').textContent || 0) + 1);
  if (message.type === 'error' || message.status === 'error') {
    liveState.show('failed', message.message ?? message.error ?? 'The server reported an error.');
    return;
  }
  if (message.type === 'speech_started' || message.type === 'speech_ended') {
    $('live-events').append(el('li', { textContent: `${message.type === 'speech_started' ? 'Speech started' : 'Speech ended'} at ${seconds(message.timestamp)}` }));
    return;
  }
  if (message.type !== 'transcription') return;
  if (message.full_transcript !== undefined) {
    $('live-full').textContent = `Full transcript: ${message.full_transcript}`;
    $('live-full').hidden = false;
  }
  if (!message.is_final) {
    $('live-partial').textContent = message.transcript;
    return;
  }
  $('live-partial').textContent = '';
  if (!message.transcript) return;
  // Each sentence on its line, with its times and speaker when asked for; else the final as it came.
  const speakerOf = (s) => (s === undefined || !live?.diarize ? '' : `${typeof s === 'number' ? `speaker_${s}` : s}: `);
  const lines = message.utterances?.length
    ? message.utterances.map((u) => `${speakerOf(u.speaker)}${u.text} (${seconds(u.start)}-${seconds(u.end)})`)
    : [`${speakerOf(message.words?.[0]?.speaker)}${message.transcript}`];
  for (const line of lines) $('live-finals').append(el('p', { textContent: line }));
}

function stopAudio() {
  live?.stream.getTracks().forEach((t) => t.stop());
  live?.context.close().catch(() => {});
  live?.encoder?.close();
}

async function stopLive() {
  if (!live || live.finishing) return;
  const current = live;
  current.finishing = true;
  current.stream.getTracks().forEach((t) => t.stop());
  liveState.show('working', 'Finishing the last words…');
  $('live-stop').disabled = true;
  // What the Opus encoder still holds goes first; the server answers close_stream with the last final, then closes the socket.
  await current.encoder?.flush().catch(() => {});
  if (current.socket.readyState === WebSocket.OPEN) current.socket.send(JSON.stringify({ type: 'close_stream' }));
}

const drop = $('drop');
drop.addEventListener('dragover', (event) => {
  event.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (event) => {
  event.preventDefault();
  drop.classList.remove('over');
  transcribeFile(event.dataTransfer.files[0]);
});
$('audio-file').addEventListener('change', () => {
  const file = $('audio-file').files[0];
  // Emptied, so choosing the same file again (other options) transcribes it again.
  $('audio-file').value = '';
  transcribeFile(file);
});
$('url-form').addEventListener('submit', (event) => {
  event.preventDefault();
  transcribeUrl($('audio-url').value.trim());
});
for (const format of ['srt', 'vtt', 'json']) $(`export-${format}`).addEventListener('click', () => exportAs(format));
$('live-start').addEventListener('click', startLive);
$('live-encoding').addEventListener('change', showEncodingOptions);
for (const id of ['route-parley', 'route-openai']) $(id).addEventListener('change', showRouteOptions);
showRouteOptions();
$('live-stop').addEventListener('click', stopLive);
