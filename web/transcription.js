// Transcription: a file (/v1/audio/transcriptions) or a URL (/api/v1/stt/get_text), with every
// option (those needing a pack that is not loaded are disabled, the reason beside them); the
// transcript's words seek the audio, speakers are coloured, the analysis is drawn as bars; SRT,
// VTT and JSON export. Live: the microphone streamed over the WebSocket, partials growing in place.
import { $, api, el, explainDisabled, fillSelect, loadedKinds, Player, postJson, RequestState, saveBlob, session } from './lib.js';

const LIVE_RATE = 16000;
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
let live; // { socket, context, stream, node }

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
  explainDisabled($('diarize'), 'diarize-reason', diarizable ? undefined : 'Speakers needs a diarization pack (segmentation and speaker embedding) installed and loaded: see Model packs.');
  const recognizers = [...kinds].some((k) => k.startsWith('asr-'));
  const reason = recognizers ? undefined : 'No speech recogniser pack is loaded: install one (Model packs).';
  for (const id of ['audio-file', 'transcribe-url', 'live-start']) $(id).disabled = Boolean(reason);
  $('stt-reason').textContent = reason ?? '';
}

function options() {
  const chosen = {};
  for (const [box, field] of ANALYSIS) if ($(box).checked) chosen[field] = 'true';
  return { language: $('stt-language').value, ...chosen };
}

async function transcribeFile(file) {
  if (!file) return;
  state.begin(`Transcribing ${file.name}…`);
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('model', 'whisper-1');
  form.append('response_format', 'verbose_json');
  form.append('timestamp_granularities[]', 'word');
  form.append('timestamp_granularities[]', 'segment');
  for (const [field, value] of Object.entries(options())) form.append(field, value);
  const started = performance.now();
  try {
    const body = await (await api('/v1/audio/transcriptions', { method: 'POST', body: form })).json();
    show({ text: body.text, language: body.language, duration: body.duration, words: body.words ?? [], ...(body.parley ?? {}) }, file.name);
    await player.load(file);
    state.done(`Transcribed ${file.name}: ${body.duration.toFixed(1)} s of audio in ${Math.round(performance.now() - started)} ms.`);
  } catch (error) {
    state.fail(error);
  }
}

async function transcribeUrl(url) {
  state.begin(`Fetching and transcribing ${url}…`);
  const query = new URLSearchParams({ ...options(), word_timestamps: 'true' });
  const started = performance.now();
  try {
    const body = await (await postJson(`/api/v1/stt/get_text?${query}`, { url })).json();
    show({ text: body.transcription, language: body.language, duration: body.duration, words: body.words ?? [], age: body.age, gender: body.gender, emotions: body.emotions, speakers: body.speakers, analyzers: body.metadata?.analyzers }, url.split('/').pop() || 'audio');
    state.done(`Transcribed ${url}: ${body.duration.toFixed(1)} s of audio in ${Math.round(performance.now() - started)} ms.`);
  } catch (error) {
    state.fail(error);
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
    const node = new AudioWorkletNode(context, 'pcm16');
    const query = new URLSearchParams({ token: session.key, encoding: 'linear16', sample_rate: String(LIVE_RATE), language: $('stt-language').value, word_timestamps: 'true' });
    const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/v1/stt/get_text?${query}`);
    socket.binaryType = 'arraybuffer';
    live = { socket, context, stream, node };
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('close', (event) => reject(new Error(`The server refused the live transcription (${event.code}${event.reason ? `: ${event.reason}` : ''}).`)), { once: true });
    });
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
      if (socket.readyState !== WebSocket.OPEN) return;
      socket.send(event.data);
      sent += event.data.byteLength / 2;
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

function onLiveMessage(message) {
  $('live-received').textContent = String(Number($('live-received').textContent || 0) + 1);
  if (message.type === 'error' || message.status === 'error') {
    liveState.show('failed', message.message ?? message.error ?? 'The server reported an error.');
    return;
  }
  if (message.type !== 'transcription') return;
  if (message.is_final) {
    if (message.transcript) $('live-finals').append(el('p', { textContent: message.transcript }));
    $('live-partial').textContent = '';
  } else {
    $('live-partial').textContent = message.transcript;
  }
}

function stopAudio() {
  live?.stream.getTracks().forEach((t) => t.stop());
  live?.context.close().catch(() => {});
}

function stopLive() {
  if (!live) return;
  stopAudio();
  liveState.show('working', 'Finishing the last words…');
  $('live-stop').disabled = true;
  // The server answers close_stream with the last final, then closes the socket.
  live.socket.send(JSON.stringify({ type: 'close_stream' }));
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
$('live-stop').addEventListener('click', stopLive);
