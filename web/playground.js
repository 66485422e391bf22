// The Parley playground: plain DOM and fetch, no framework, no bundler. Everything goes through
// the same API any client uses, with the key the visitor pastes; each view is its own module.
import { $, json, rememberKey, session } from './lib.js';
import { fillModels, loadVoices } from './speech.js';
import { showTranscriptionOptions } from './transcription.js';
import { loadClones, loadDictionaries } from './voices.js';
import { loadPacks, onPacksChanged } from './packs.js';

function setKeyStatus(text, isError = false) {
  $('key-status').textContent = text;
  $('key-status').classList.toggle('error', isError);
}

async function loadAll() {
  // A new key is not known to be an admin's until loadPacks asks: until then it sees no admin controls.
  session.isAdmin = false;
  if (!session.key) return setKeyStatus('Paste a key to start (parley keys create, or the key printed at first start).');
  setKeyStatus('Checking the key…');
  try {
    const [{ data }, packs] = await Promise.all([json('/v1/models'), json('/v1/packs')]);
    session.models = data;
    session.packs = packs;
    setKeyStatus(`Key accepted: ${data.length} models.`);
    fillModels();
    // What needs a key waits for one; transcription's controls also wait for a recogniser (showTranscriptionOptions).
    for (const id of ['clone-record', 'clone', 'dict-save', 'dict-try']) $(id).disabled = false;
    showTranscriptionOptions();
    await Promise.all([loadVoices(), loadPacks(), loadDictionaries(), loadClones()]);
    // Again, now that loadPacks knows whether the key is an admin's (who may install what transcription lacks).
    showTranscriptionOptions();
  } catch (error) {
    setKeyStatus(error.status === 401 ? 'This key is not valid.' : `Could not reach Parley: ${error.message}`, true);
  }
}

// After an install, removal or reload: the models, voices and options of what is loaded now.
onPacksChanged(async () => {
  session.models = (await json('/v1/models')).data;
  fillModels();
  showTranscriptionOptions();
  await loadVoices();
});

$('key').value = session.key;
$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  rememberKey($('key').value.trim());
  await loadAll();
});
$('forget-key').addEventListener('click', () => {
  rememberKey('');
  $('key').value = '';
  setKeyStatus('Key forgotten.');
});

loadAll();

// Each cell carries its column's name, which the phone layout shows beside the value.
const labelCells = (table) => {
  const names = [...table.tHead.rows[0].cells].map((th) => th.textContent);
  for (const row of table.tBodies[0].rows) [...row.cells].forEach((td, i) => (td.dataset.label = names[i] ?? ''));
};
for (const table of document.querySelectorAll('.scroll table')) new MutationObserver(() => labelCells(table)).observe(table.tBodies[0], { childList: true });
