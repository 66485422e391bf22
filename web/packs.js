// Model packs: installed ones with their state and the catalogue's others. An admin key (the
// admin routes answer it) also gets the pack tools: reload.
import { $, api, el, json, RequestState, session } from './lib.js';

const state = new RequestState('admin-status', { start: ['reload'] });

function cell(text) {
  return el('td', { textContent: text });
}

export async function loadPacks() {
  session.packs = await json('/v1/packs');
  session.isAdmin = await json('/api/v1/admin/models').then(
    () => true,
    () => false,
  );
  $('admin-tools').hidden = !session.isAdmin;
  const { installed, available } = session.packs;
  const row = (p, stateText) => {
    const name = cell(p.id);
    if (p.description) name.title = p.description;
    return el('tr', {}, name, cell(p.kind), cell(p.languages.join(', ')), cell(p.reason ? `${stateText}: ${p.reason}` : stateText));
  };
  $('packs').tBodies[0].replaceChildren(...installed.map((p) => row(p, p.state)), ...available.map((p) => row(p, 'available')));
}

async function reload() {
  state.begin('Reloading the packs…');
  try {
    const report = await (await api('/api/v1/admin/models/reload', { method: 'POST' })).json();
    await loadPacks();
    state.done(`Reloaded: ${report.loaded.length} loaded, ${report.started.length} started, ${report.skipped.length} skipped.`);
  } catch (error) {
    state.fail(error);
  }
}

$('reload').addEventListener('click', reload);
