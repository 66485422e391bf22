// Speech: every generation and loaded pack, their voices and options; playback as the audio
// streams (Web Audio) and afterwards (an <audio> element with a waveform), the word being spoken
// marked; download in the chosen format; a voice preview; two voices side by side. Generations
// speak over the synthesis WebSocket, the one route that sends word times with the audio.
import { $, api, el, explainDisabled, fillSelect, int16ToFloat, json, Player, RequestState, saveBlob, session, socketUrl, wavBlob } from './lib.js';

const PACK_RATE = 24000; // /v1/audio/speech's pcm: 24 kHz s16le mono, as OpenAI documents it
const MIN_CHUNK_SECONDS = 0.1; // smaller pieces are gathered first, so playback does not stutter
const GENERATION_RATES = { 'tts-v3.1': [44100, 24000, 16000, 8000], default: [24000, 22050, 16000, 8000] };
const GENERATION_FORMATS = ['wav', 'mp3', 'mulaw', 'pcm'];
const PACK_FORMATS = ['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm'];
const EXTENSIONS = { mulaw: 'ulaw', pcm: 'pcm' };
const PREVIEW_TEXT = 'Hello! This is how I sound.';
const WAVE_REDRAW_MS = 500;
const HIGHLIGHT_MS = 50; // how often the word being spoken is looked up while the stream plays
/** tts-v2 and tts-large take these (tts-v3.1 accepts and ignores them; /v1/audio/speech has none). */
const VOICE_CONTROLS = ['consistency', 'similarity', 'enhancement'];
/** After a sentence's end mark and the space after it: where the text is cut into socket messages. */
const SENTENCE_SPLIT = /(?<=[.!?…。！？]["'”’)\]]*\s+)(?=\S)/u;

const player = new Player('speech-audio', 'speech-wave');
const players = [new Player('compare-audio-a', 'compare-wave-a'), new Player('compare-audio-b', 'compare-wave-b')];
let voices = [];
let speaking; // { controller, context }
let lastAudio; // { pieces, rate, request }
let runs = 0; // the latest speak(): an older one, stopped by it, must not touch the view
/** The words of the audio on screen, their buttons, and the index marked as spoken (-1: none). */
const spoken = { words: [], buttons: [], current: -1 };
/** While the streamed audio plays in the AudioContext, it (not the <audio> element) says which word sounds. */
let streamClock; // () => seconds into the audio, or undefined

const state = new RequestState('speech-status', {
  start: ['speak', 'preview'],
  stop: ['stop'],
  clear: () => {
    $('ttfa').textContent = '–';
    $('ttfa').dataset.ms = '';
    $('audio-seconds').textContent = '–';
    $('audio-seconds').dataset.seconds = '0';
    $('audio-seconds').dataset.played = '0';
    player.clear();
    lastAudio = undefined;
    $('download').disabled = true;
    clearWords();
  },
});
const compareState = new RequestState('compare-status', { start: ['compare'], clear: () => players.forEach((p) => p.clear()) });

const modelInfo = () => session.models.find((m) => m.id === $('model').value);
const isGeneration = () => modelInfo()?.parley.kind === 'generation';

export function fillModels() {
  const speech = session.models.filter((m) => m.parley?.task === 'speech' && m.parley.kind !== 'alias');
  fillSelect($('model'), speech.map((m) => [m.id, m.parley.kind === 'generation' ? m.id : `${m.id} (pack)`]));
  $('model').disabled = speech.length === 0;
  showOptions();
}

/** The options the chosen model takes; the others disabled, with the reason beside them. */
function showOptions() {
  const model = modelInfo();
  const generation = isGeneration();
  fillSelect($('language'), [['auto', 'Automatic'], ...(model?.parley.languages ?? []).map((l) => [l, l])]);
  fillSelect($('rate'), (generation ? (GENERATION_RATES[model.id] ?? GENERATION_RATES.default) : [PACK_RATE]).map((r) => [String(r), `${r} Hz`]));
  const formats = !generation ? PACK_FORMATS : model.id === 'tts-large' ? ['wav', 'pcm'] : GENERATION_FORMATS;
  fillSelect($('format'), formats.map((f) => [f, f]));
  const packReason = generation ? undefined : 'A pack speaks through /v1/audio/speech, which takes no language, rate or dictionary: choose a generation (tts-v2, tts-v3.1) for these.';
  explainDisabled($('language'), 'speech-options-reason', packReason);
  explainDisabled($('rate'), 'speech-options-reason', packReason);
  const controlsReason = !generation
    ? 'A pack speaks through /v1/audio/speech, which has no consistency, similarity or enhancement: choose tts-v2 or tts-large.'
    : model.id === 'tts-v3.1'
      ? 'tts-v3.1 has no consistency, similarity or enhancement (it accepts and ignores them): choose tts-v2 or tts-large.'
      : undefined;
  for (const id of VOICE_CONTROLS) explainDisabled($(id), 'voice-controls-reason', controlsReason);
  $('voice-controls-note').hidden = Boolean(controlsReason);
  $('voice-controls-note').textContent = controlsReason ? '' : `Sent with each ${model?.id} request. The built-in eSpeak and Piper voices have no such control: for them the values are checked and change nothing.`;
  // The generations take 0.5-2; /v1/audio/speech takes OpenAI's 0.25-4 (beyond the engine's range, time-stretched).
  const [min, max] = generation ? [0.5, 2] : [0.25, 4];
  Object.assign($('speed'), { min, max });
  $('speed').value = String(Math.min(max, Math.max(min, Number($('speed').value))));
  $('speed-value').value = Number($('speed').value).toFixed(2);
  for (const box of document.querySelectorAll('#dicts input')) box.disabled = !generation;
}

export async function loadVoices() {
  const model = $('model').value;
  if (!model) return;
  ({ voices } = await json(`/v1/audio/voices?model=${encodeURIComponent(model)}`));
  const entries = voices.map((v) => [v.id, v.aliases.length ? `${v.name} — ${v.aliases.join(', ')}` : v.name]);
  for (const id of ['voice', 'voice-a', 'voice-b']) {
    fillSelect($(id), entries);
    $(id).disabled = voices.length === 0;
  }
  if (voices.length > 1 && $('voice-b').selectedIndex === 0) $('voice-b').selectedIndex = 1;
  $('speak').disabled = $('preview').disabled = $('compare').disabled = voices.length === 0;
  showVoiceTags();
}

export async function loadDictionaryChoices() {
  const dicts = await json('/api/v1/pronunciation-dicts');
  const chosen = new Set([...document.querySelectorAll('#dicts input:checked')].map((b) => b.value));
  $('dicts').replaceChildren(
    ...dicts.map((d) => {
      const box = el('input', { type: 'checkbox', value: d.id, checked: chosen.has(d.id), disabled: !isGeneration() });
      return el('label', {}, box, ` ${d.id} (${d.items.length} words)`);
    }),
  );
  $('dicts-none').hidden = dicts.length > 0;
}

function showVoiceTags() {
  const voice = voices.find((v) => v.id === $('voice').value);
  const tags = voice ? [...voice.languages, voice.gender, voice.accent, voice.engine, `${voice.sample_rate} Hz`, ...voice.aliases.map((a) => `OpenAI: ${a}`)] : [];
  $('voice-tags').replaceChildren(...tags.filter(Boolean).map((t) => el('li', { textContent: t })));
}

/** The request the form describes, for `voice` and `text`. */
function requestOf(voice, text) {
  const model = $('model').value;
  const dicts = [...document.querySelectorAll('#dicts input:checked')].map((b) => b.value);
  return {
    model,
    generation: isGeneration(),
    voice,
    text,
    speed: Number($('speed').value),
    language: $('language').value,
    rate: isGeneration() ? Number($('rate').value) : PACK_RATE,
    dicts,
    controls: Object.fromEntries(VOICE_CONTROLS.filter((id) => !$(id).disabled).map((id) => [id, Number($(id).value)])),
  };
}

function speechCall(r, format) {
  if (r.generation) {
    const body = { text: r.text, voice_id: r.voice, sample_rate: r.rate, speed: r.speed, language: r.language, output_format: format, ...r.controls };
    if (r.dicts.length) body.pronunciation_dicts = r.dicts;
    return body;
  }
  return { model: r.model, voice: r.voice, input: r.text, speed: r.speed, response_format: format };
}

/**
 * Streams 16-bit PCM of the request: a generation over its WebSocket
 * (/api/v1/<model>/get_speech/stream: base64 chunks, and word_timestamp messages when onWord is
 * given), a pack through /v1/audio/speech (chunked bytes, no word times). Calls onBytes per piece.
 */
async function streamPcm(r, onBytes, signal, onWord) {
  if (!r.generation) {
    const body = JSON.stringify(speechCall(r, 'pcm'));
    const response = await api('/v1/audio/speech', { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (value) onBytes(value);
      if (done) return;
    }
  }
  // Whitespace alone is a keep-alive on the socket (no answer): said here instead of waiting forever.
  if (!/\S/.test(r.text)) throw new Error('Write some text to speak.');
  const socket = new WebSocket(socketUrl(`/api/v1/${r.model}/get_speech/stream`, { token: session.key }));
  await new Promise((resolve, reject) => {
    let finished = false;
    const finish = (error) => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', stop);
      socket.close();
      if (error) reject(error);
      else resolve();
    };
    const stop = () => finish(new DOMException('Stopped', 'AbortError'));
    if (signal?.aborted) return stop();
    signal?.addEventListener('abort', stop);
    // Sentence by sentence, as a language model's client sends text (continue, then flush): each
    // sentence is spoken, and its words timed, as soon as it is whole, so marks come with the first audio.
    socket.addEventListener('open', () => {
      const body = { ...speechCall(r, 'pcm'), word_timestamps: Boolean(onWord), request_id: 'playground' };
      const sentences = r.text.split(SENTENCE_SPLIT);
      sentences.forEach((text, i) => socket.send(JSON.stringify({ ...body, text, ...(i < sentences.length - 1 ? { continue: true } : { flush: true }) })));
    });
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(event.data);
      if (message.status === 'chunk') onBytes(Uint8Array.from(atob(message.data.audio), (c) => c.charCodeAt(0)));
      else if (message.status === 'word_timestamp') onWord?.(message.data);
      else if (message.status === 'complete') finish();
      else if (message.status === 'error') finish(new Error(message.message ?? message.error?.message ?? 'The server reported an error.'));
    });
    // A refused upgrade (a bad key, too many sockets) ends here too: the browser gives no status.
    socket.addEventListener('close', (event) => finish(new Error(`The synthesis socket closed before the audio was complete (${event.code}${event.reason ? `: ${event.reason}` : ''}).`)));
  });
}

// --- the word being spoken ----------------------------------------------------------
function clearWords() {
  streamClock = undefined;
  spoken.words = [];
  spoken.buttons = [];
  spoken.current = -1;
  $('speech-words').replaceChildren();
  $('speech-words-box').hidden = true;
  $('speech-words-note').hidden = true;
}

function addWord(word) {
  const button = el('button', { type: 'button', className: 'word', textContent: word.word, title: `${word.start.toFixed(2)}-${word.end.toFixed(2)} s` });
  button.addEventListener('click', () => {
    if (!player.url) return;
    stopStreamPlayback();
    player.audio.currentTime = word.start;
    player.audio.play().catch(() => {});
  });
  spoken.words.push(word);
  spoken.buttons.push(button);
  $('speech-words').append(button, ' ');
  $('speech-words-box').hidden = false;
}

/** Marks (aria-current) the word sounding at `seconds` into the audio; none between words. */
function markWordAt(seconds) {
  const index = spoken.words.findIndex((w) => w.start <= seconds && seconds < w.end);
  if (index === spoken.current) return;
  spoken.buttons[spoken.current]?.removeAttribute('aria-current');
  spoken.buttons[index]?.setAttribute('aria-current', 'true');
  spoken.current = index;
}

/** The <audio> element takes over from the stream's AudioContext (both would sound at once). */
function stopStreamPlayback() {
  if (!streamClock) return;
  streamClock = undefined;
  speaking?.context.close().catch(() => {});
}

for (const event of ['timeupdate', 'seeked']) player.audio.addEventListener(event, () => streamClock || markWordAt(player.audio.currentTime));
// Played or moved by the person: the element's time wins at once, even while the stream's last piece sounds.
for (const event of ['play', 'seeking']) player.audio.addEventListener(event, stopStreamPlayback);

/** Gathers bytes into whole 16-bit samples of at least `minBytes`, then hands them on. */
function sampleAligner(minBytes, onPiece) {
  let pending = new Uint8Array(0);
  return (value, flush = false) => {
    if (value) {
      const joined = new Uint8Array(pending.length + value.length);
      joined.set(pending);
      joined.set(value, pending.length);
      pending = joined;
    }
    const whole = pending.length - (pending.length % 2);
    if (whole >= minBytes || (flush && whole > 0)) {
      onPiece(pending.slice(0, whole));
      pending = pending.slice(whole);
    }
  };
}

function stopSpeaking() {
  speaking?.controller.abort();
  speaking?.context.close().catch(() => {});
  speaking = undefined;
  streamClock = undefined; // its marker stops at its next tick
}

async function speak(text) {
  stopSpeaking();
  const run = ++runs;
  const r = requestOf($('voice').value, text);
  state.begin(`Synthesising with ${r.voice}…`);
  const context = new AudioContext({ sampleRate: r.rate });
  await context.resume();
  const controller = new AbortController();
  speaking = { controller, context };
  const started = performance.now();
  const pieces = [];
  let playAt = 0;
  let received = 0;
  let drawnAt = 0;
  // Where each piece sounds: [context time it starts, seconds into the audio, its length].
  const schedule = [];
  streamClock = () => {
    const now = context.currentTime;
    const piece = schedule.findLast(([at]) => at <= now);
    return piece ? piece[1] + Math.min(now - piece[0], piece[2]) : -1;
  };
  const clock = streamClock;
  const marker = setInterval(() => {
    if (streamClock !== clock) return clearInterval(marker);
    markWordAt(clock());
    // Every piece has sounded: the <audio> element holds the audio from here on.
    if (lastAudio && context.currentTime > playAt) {
      streamClock = undefined;
      markWordAt(-1);
    }
  }, HIGHLIGHT_MS);
  const play = (bytes) => {
    if (run !== runs) return;
    const samples = int16ToFloat(bytes);
    pieces.push(bytes);
    const buffer = context.createBuffer(1, samples.length, r.rate);
    buffer.copyToChannel(samples, 0);
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(context.destination);
    // Counted as each piece finishes sounding: proof the audio really played, not just arrived.
    source.addEventListener('ended', () => {
      const out = $('audio-seconds');
      out.dataset.played = String(Number(out.dataset.played ?? 0) + buffer.duration);
    });
    const at = Math.max(playAt, context.currentTime + 0.02);
    source.start(at);
    schedule.push([at, received / r.rate, buffer.duration]);
    if (playAt === 0) {
      // Until the first sample sounds: the request, the first synthesis, and the scheduling margin.
      const ms = Math.round(performance.now() - started + (at - context.currentTime) * 1000);
      $('ttfa').textContent = `${ms} ms`;
      $('ttfa').dataset.ms = String(ms);
    }
    playAt = at + buffer.duration;
    received += samples.length;
    $('audio-seconds').textContent = `${(received / r.rate).toFixed(2)} s`;
    $('audio-seconds').dataset.seconds = String(received / r.rate);
    // The waveform while it streams, redrawn at most every WAVE_REDRAW_MS: each redraw reads all the audio so far.
    if (performance.now() - drawnAt > WAVE_REDRAW_MS) {
      drawnAt = performance.now();
      player.setSamples(int16ToFloat(joinBytes(pieces)));
    }
  };
  const align = sampleAligner(MIN_CHUNK_SECONDS * r.rate * 2, play);
  try {
    await streamPcm(r, align, controller.signal, (word) => run === runs && addWord(word));
    align(undefined, true);
    if (run !== runs) return;
    if (received === 0) throw new Error('The server sent no audio.');
    if (!r.generation) {
      $('speech-words-note').textContent = 'Words are marked as they are spoken with a generation (tts-v2, tts-v3.1): /v1/audio/speech sends no word times.';
      $('speech-words-note').hidden = false;
    }
    lastAudio = { pieces, rate: r.rate, request: r };
    await player.load(wavBlob(pieces, r.rate), int16ToFloat(joinBytes(pieces)));
    $('download').disabled = false;
    state.done(`Done: ${(received / r.rate).toFixed(2)} s of audio.`);
  } catch (error) {
    if (run !== runs) return;
    if (error.name === 'AbortError') state.idle('Stopped.');
    else state.fail(error);
  }
}

function joinBytes(pieces) {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** The heard audio for wav and pcm; other formats are encoded by the server, from the same request. */
async function download() {
  if (!lastAudio) return;
  const format = $('format').value;
  const { request: r } = lastAudio;
  const name = `parley-${r.voice}.${EXTENSIONS[format] ?? format}`;
  if (format === 'wav') return saveBlob(wavBlob(lastAudio.pieces, lastAudio.rate), name);
  if (format === 'pcm') return saveBlob(new Blob(lastAudio.pieces, { type: 'application/octet-stream' }), name);
  const path = r.generation ? `/api/v1/${r.model}/get_speech` : '/v1/audio/speech';
  $('download').disabled = true;
  try {
    const response = await api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(speechCall(r, format)) });
    saveBlob(await response.blob(), name);
  } catch (error) {
    state.fail(`The download failed: ${error.message}`);
  } finally {
    $('download').disabled = !lastAudio;
  }
}

/** Whole audio of one voice, as a WAV blob and its samples. */
async function synthesizeWhole(r, signal) {
  const pieces = [];
  await streamPcm(r, sampleAligner(2, (bytes) => pieces.push(bytes)), signal);
  const bytes = joinBytes(pieces);
  return { blob: wavBlob([bytes], r.rate), samples: int16ToFloat(bytes) };
}

async function compare() {
  const text = $('text').value;
  const pair = [$('voice-a').value, $('voice-b').value];
  compareState.begin(`Synthesising ${pair.join(' and ')}…`);
  try {
    const results = await Promise.all(pair.map((voice) => synthesizeWhole(requestOf(voice, text))));
    await Promise.all(results.map((result, i) => players[i].load(result.blob, result.samples)));
    $('compare-label-a').textContent = pair[0];
    $('compare-label-b').textContent = pair[1];
    compareState.done(`Ready: ${pair[0]} and ${pair[1]}, the same text.`);
  } catch (error) {
    compareState.fail(error);
  }
}

/** Speaks `text` with any voice of any generation (a cloned one, or to try a dictionary), into `target`. */
export async function speakWith({ model, voice, text, dicts = [] }, target) {
  const r = { model, generation: true, voice, text, speed: 1, language: 'auto', rate: 24000, dicts };
  const result = await synthesizeWhole(r);
  await target.load(result.blob, result.samples);
  return result.samples.length / r.rate;
}

$('model').addEventListener('change', () => {
  showOptions();
  loadVoices().catch((e) => state.fail(e));
});
$('voice').addEventListener('change', showVoiceTags);
$('speed').addEventListener('input', () => ($('speed-value').value = Number($('speed').value).toFixed(2)));
$('stop').addEventListener('click', () => {
  stopSpeaking();
  state.idle('Stopped.');
});
$('speech-form').addEventListener('submit', (event) => {
  event.preventDefault();
  speak($('text').value);
});
$('preview').addEventListener('click', () => speak(PREVIEW_TEXT));
$('download').addEventListener('click', download);
$('compare').addEventListener('click', compare);
for (const id of VOICE_CONTROLS) $(id).addEventListener('input', () => ($(`${id}-value`).value = Number($(id).value).toFixed(2)));
