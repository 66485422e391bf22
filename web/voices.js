// Voices: clones made from a recorded or uploaded sample (add_voice), their status and profile,
// speaking with one, deleting it; pronunciation dictionaries listed, edited and tried on a word.
import { $, api, el, json, Player, postJson, RequestState } from './lib.js';
import { loadDictionaryChoices, speakWith } from './speech.js';

const CLONE_TEXT = 'Hello! This is my cloned voice, made on this machine.';
const DICT_VOICE_MODEL = 'tts-v2';
const POLL_MS = 1000;

const clonePlayer = new Player('clone-audio', 'clone-wave');
const dictPlayer = new Player('dict-audio', 'dict-wave');
let recording; // { recorder, chunks, stream }
let recorded; // Blob of the last recording
let pollTimer;
let editing; // id of the dictionary in the editor, or undefined for a new one
let preparing; // voiceId of the clone just made while it is processing: its status line follows it

const cloneState = new RequestState('clone-status', { start: ['clone'], clear: () => clonePlayer.clear() });
const listState = new RequestState('clones-status', { clear: () => clonePlayer.clear() });
const dictState = new RequestState('dict-status', { start: ['dict-save', 'dict-try'], clear: () => dictPlayer.clear() });

export async function loadClones() {
  const { voices } = await json('/api/v1/tts-large/get_cloned_voices');
  $('clones').tBodies[0].replaceChildren(
    ...voices.map((v) => {
      const profile = v.profile ? Object.entries(v.profile).filter(([, value]) => typeof value !== 'object').map(([k, value]) => `${k}: ${typeof value === 'number' ? Math.round(value * 100) / 100 : value}`).join(', ') : '';
      const speak = el('button', { type: 'button', textContent: 'Speak', disabled: v.status !== 'completed' });
      speak.setAttribute('aria-label', `Speak with ${v.displayName}`);
      speak.addEventListener('click', () => speakClone(v));
      const remove = el('button', { type: 'button', className: 'secondary', textContent: 'Delete' });
      remove.setAttribute('aria-label', `Delete ${v.displayName}`);
      remove.addEventListener('click', () => deleteClone(v));
      const status = v.error ? `${v.status}: ${v.error}` : v.status;
      return el('tr', {}, el('td', { textContent: v.displayName }), el('td', { textContent: v.model }), el('td', { textContent: status }), el('td', { textContent: profile || v.engine || '–' }), el('td', { className: 'actions' }, speak, remove));
    }),
  );
  $('clones-none').hidden = voices.length > 0;
  const made = voices.find((v) => v.voiceId === preparing);
  if (made && made.status !== 'processing') {
    preparing = undefined;
    if (made.status === 'completed') cloneState.done(`Cloned: ${made.displayName} (${made.voiceId}), completed.`);
    else cloneState.show('failed', `Cloning ${made.displayName} failed: ${made.error ?? made.status}`);
  }
  // A clone is prepared after add_voice answers: the list is read again until none is processing.
  clearTimeout(pollTimer);
  if (voices.some((v) => v.status === 'processing')) pollTimer = setTimeout(() => loadClones().catch((e) => listState.fail(e)), POLL_MS);
}

async function speakClone(voice) {
  listState.begin(`${voice.displayName} is speaking…`);
  try {
    const seconds = await speakWith({ model: voice.model, voice: voice.voiceId, text: CLONE_TEXT }, clonePlayer);
    listState.done(`${voice.displayName}: ${seconds.toFixed(2)} s of audio.`);
  } catch (error) {
    listState.fail(error);
  }
}

async function deleteClone(voice) {
  listState.begin(`Deleting ${voice.displayName}…`);
  try {
    await postJson('/api/v1/tts-large', { voiceId: voice.voiceId }, 'DELETE');
    await loadClones();
    listState.done(`Deleted ${voice.displayName}.`);
  } catch (error) {
    listState.fail(error);
  }
}

async function toggleRecording() {
  if (recording) {
    recording.recorder.stop();
    return;
  }
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const recorder = new MediaRecorder(stream);
    const chunks = [];
    recording = { recorder, chunks, stream };
    recorder.addEventListener('dataavailable', (event) => chunks.push(event.data));
    recorder.addEventListener('stop', () => {
      stream.getTracks().forEach((t) => t.stop());
      recorded = new Blob(chunks, { type: recorder.mimeType });
      recording = undefined;
      $('clone-record').textContent = 'Record a sample';
      $('clone-sample').textContent = `Recorded sample: ${(recorded.size / 1024).toFixed(0)} kB (used unless a file is chosen).`;
    });
    recorder.start();
    $('clone-record').textContent = 'Stop recording';
    $('clone-sample').textContent = 'Recording… read a sentence or two aloud.';
  } catch (error) {
    cloneState.fail(`The microphone is not available: ${error.message}`);
  }
}

async function clone() {
  const file = $('clone-file').files[0];
  const sample = file ?? recorded;
  if (!sample) return cloneState.fail('Choose a sample file or record one first.');
  preparing = undefined;
  cloneState.begin(`Cloning ${$('clone-name').value}…`);
  const form = new FormData();
  form.append('displayName', $('clone-name').value);
  if ($('clone-language').value) form.append('language', $('clone-language').value);
  if ($('clone-transcript').value.trim()) form.append('transcript', $('clone-transcript').value.trim());
  form.append('file', sample, file ? file.name : `recording.${sample.type.includes('ogg') ? 'ogg' : 'webm'}`);
  try {
    const { data } = await (await api(`/api/v1/${$('clone-model').value}/add_voice`, { method: 'POST', body: form })).json();
    cloneState.done(`Cloned: ${data.displayName} (${data.voiceId}), ${data.status}.`);
    preparing = data.status === 'processing' ? data.voiceId : undefined;
    await loadClones();
  } catch (error) {
    cloneState.fail(error);
  }
}

// --- dictionaries ------------------------------------------------------------------
/** "word = pronunciation" lines, the editor's text. */
const itemsToText = (items) => items.map((i) => `${i.word} = ${i.pronunciation}`).join('\n');
function textToItems(text) {
  const items = [];
  for (const [n, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    const at = line.indexOf('=');
    if (at < 0) throw new Error(`Line ${n + 1}: write word = pronunciation`);
    items.push({ word: line.slice(0, at).trim(), pronunciation: line.slice(at + 1).trim() });
  }
  if (!items.length) throw new Error('Write at least one line: word = pronunciation');
  return items;
}

export async function loadDictionaries() {
  const dicts = await json('/api/v1/pronunciation-dicts');
  $('dict-list').tBodies[0].replaceChildren(
    ...dicts.map((d) => {
      const edit = el('button', { type: 'button', className: 'secondary', textContent: 'Edit' });
      edit.setAttribute('aria-label', `Edit ${d.id}`);
      edit.addEventListener('click', () => {
        editing = d.id;
        $('dict-items').value = itemsToText(d.items);
        $('dict-editing').textContent = `Editing ${d.id}`;
        $('dict-items').focus();
      });
      const remove = el('button', { type: 'button', className: 'secondary', textContent: 'Delete' });
      remove.setAttribute('aria-label', `Delete ${d.id}`);
      remove.addEventListener('click', () => deleteDictionary(d.id));
      return el('tr', {}, el('td', { textContent: d.id }), el('td', { textContent: d.items.map((i) => i.word).join(', ') }), el('td', { className: 'actions' }, edit, remove));
    }),
  );
  $('dicts-empty').hidden = dicts.length > 0;
  await loadDictionaryChoices();
}

async function saveDictionary() {
  dictState.begin(editing ? `Saving ${editing}…` : 'Creating a dictionary…');
  try {
    const items = textToItems($('dict-items').value);
    const response = await (editing ? postJson('/api/v1/pronunciation-dicts', { id: editing, items }, 'PUT') : postJson('/api/v1/pronunciation-dicts', { items }));
    const saved = await response.json();
    editing = saved.id;
    $('dict-editing').textContent = `Editing ${saved.id}`;
    await loadDictionaries();
    dictState.done(`Saved ${saved.id}: ${saved.items.length} words.`);
  } catch (error) {
    dictState.fail(error);
  }
}

async function deleteDictionary(id) {
  dictState.begin(`Deleting ${id}…`);
  try {
    await postJson('/api/v1/pronunciation-dicts', { id }, 'DELETE');
    if (editing === id) newDictionary();
    await loadDictionaries();
    dictState.done(`Deleted ${id}.`);
  } catch (error) {
    dictState.fail(error);
  }
}

function newDictionary() {
  editing = undefined;
  $('dict-items').value = '';
  $('dict-editing').textContent = 'New dictionary';
}

/** Speaks the word with the dictionary in the editor (saved first), so its pronunciation can be heard. */
async function tryWord() {
  const word = $('dict-word').value.trim();
  if (!word) return dictState.fail('Write a word to try.');
  if (!editing) return dictState.fail('Save the dictionary first.');
  dictState.begin(`Speaking "${word}" with ${editing}…`);
  try {
    const { voices } = await json(`/api/v1/${DICT_VOICE_MODEL}/get_voices`);
    const voice = voices.find((v) => v.voiceId?.startsWith('espeak-en')) ?? voices[0];
    const seconds = await speakWith({ model: DICT_VOICE_MODEL, voice: voice.voiceId, text: word, dicts: [editing] }, dictPlayer);
    dictState.done(`"${word}" with ${editing}: ${seconds.toFixed(2)} s of audio.`);
  } catch (error) {
    dictState.fail(error);
  }
}

$('clone-record').addEventListener('click', toggleRecording);
$('clone-form').addEventListener('submit', (event) => {
  event.preventDefault();
  clone();
});
$('dict-form').addEventListener('submit', (event) => {
  event.preventDefault();
  saveDictionary();
});
$('dict-new').addEventListener('click', newDictionary);
$('dict-try').addEventListener('click', tryWord);
