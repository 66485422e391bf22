// Model packs: installed ones with their state and the catalogue's others. An admin key (the
// admin routes answer it) also gets the pack tools: install (with its download's progress),
// verify, remove and reload.
import { $, api, el, json, readEvents, RequestState, session } from './lib.js';

const state = new RequestState('admin-status', {
  start: ['reload'],
  clear: () => {
    $('install-progress').hidden = true;
  },
});
/** Called after packs change, so every view offers what is loaded now. */
let packsChanged = async () => {};
export const onPacksChanged = (callback) => (packsChanged = callback);

const size = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} kB`);

function actionButton(label, pack, action, secondary = true) {
  const button = el('button', { type: 'button', textContent: label, className: secondary ? 'secondary' : '' });
  button.setAttribute('aria-label', `${label} ${pack}`);
  button.addEventListener('click', () => action(pack));
  return button;
}

export async function loadPacks() {
  session.packs = await json('/v1/packs');
  session.isAdmin = await json('/api/v1/admin/models').then(
    () => true,
    () => false,
  );
  $('admin-tools').hidden = !session.isAdmin;
  $('inference-box').hidden = !session.isAdmin;
  if (session.isAdmin) await loadInference();
  $('packs-actions').hidden = !session.isAdmin;
  const { installed, available } = session.packs;
  const row = (p, stateText, actions) => {
    const name = el('td', { textContent: p.id });
    if (p.description) name.title = p.description;
    const cells = [name, el('td', { textContent: p.kind }), el('td', { textContent: p.languages.join(', ') }), el('td', { textContent: p.reason ? `${stateText}: ${p.reason}` : stateText })];
    if (session.isAdmin) cells.push(el('td', { className: 'actions' }, ...actions));
    return el('tr', {}, ...cells);
  };
  $('packs').tBodies[0].replaceChildren(
    ...installed.map((p) => row(p, p.state, [actionButton('Verify', p.id, verify), actionButton('Remove', p.id, remove)])),
    ...available.map((p) => row(p, p.size ? `available, ${size(p.size)}` : 'available', [actionButton('Install', p.id, install, false)])),
  );
}

async function afterChange() {
  await loadPacks();
  await packsChanged();
}

async function reload() {
  state.begin('Reloading the packs…');
  try {
    const report = await (await api('/api/v1/admin/models/reload', { method: 'POST' })).json();
    await afterChange();
    state.done(`Reloaded: ${report.loaded.length} loaded, ${report.started.length} started, ${report.skipped.length} skipped.`);
  } catch (error) {
    state.fail(error);
  }
}

/** Reads the install's Server-Sent Events: progress, then installed or error. */
export async function install(id) {
  state.begin(`Installing ${id}: connecting…`);
  const bar = $('install-progress');
  bar.hidden = false;
  bar.removeAttribute('value');
  try {
    const response = await api(`/api/v1/admin/models/${encodeURIComponent(id)}/install`, { method: 'POST' });
    let outcome;
    await readEvents(response, (event, text) => {
      const data = JSON.parse(text || '{}');
      if (event === 'progress') {
        if (data.total) {
          bar.max = data.total;
          bar.value = data.received;
        }
        state.show('working', `Installing ${id}: ${size(data.received)}${data.total ? ` of ${size(data.total)}` : ''} downloaded…`);
      } else if (event === 'installed' || event === 'error') outcome = { event, data };
    });
    if (!outcome) throw new Error('The server closed the install before it finished.');
    if (outcome.event === 'error') throw new Error(`${id} was not installed: ${outcome.data.message}`);
    await afterChange();
    const { data } = outcome;
    if (data.usable && data.loaded) state.done(`Installed ${id} (${size(data.bytes)}) and loaded it.`);
    else state.fail(`${id} was installed but cannot be used: ${data.reason ?? 'it did not load'}`);
  } catch (error) {
    state.fail(error);
  }
}

async function verify(id) {
  state.begin(`Verifying ${id} (a test load)…`);
  try {
    const check = await (await api(`/api/v1/admin/models/${encodeURIComponent(id)}/verify`, { method: 'POST' })).json();
    if (check.usable) state.done(`${id} loads and works.`);
    else state.fail(`${id} cannot be used: ${check.reason}`);
  } catch (error) {
    state.fail(error);
  }
}

async function remove(id) {
  if (!confirm(`Remove ${id} from the models folder?`)) return;
  state.begin(`Removing ${id}…`);
  try {
    await api(`/api/v1/admin/models/${encodeURIComponent(id)}`, { method: 'DELETE' });
    await afterChange();
    state.done(`Removed ${id}.`);
  } catch (error) {
    state.fail(error);
  }
}

/** The supervised inference processes, from /readyz's detail (given to a caller with a key). */
async function loadInference() {
  const response = await fetch('/readyz', { headers: { authorization: `Bearer ${session.key}` } });
  const processes = (await response.json()).inference?.detail?.processes ?? [];
  $('inference').tBodies[0].replaceChildren(
    ...processes.map((p) => {
      const stateText = `${p.state}${p.pid ? ` (pid ${p.pid})` : ''}${p.lastExit ? `; last exit ${p.lastExit.reason}` : ''}`;
      const tasks = `${p.tasks.running} running, ${p.tasks.waiting} waiting, ${p.tasks.completed} done, ${p.tasks.failed} failed`;
      const cells = [p.name, stateText, p.models.join(', ') || '–', tasks, String(p.restarts), p.rssMb === null ? '–' : `${Math.round(p.rssMb)} MB`];
      return el('tr', {}, ...cells.map((text) => el('td', { textContent: text })));
    }),
  );
  $('inference-none').hidden = processes.length > 0;
}

$('reload').addEventListener('click', reload);
$('inference-refresh').addEventListener('click', () => loadInference().catch((error) => state.fail(error)));
