/**
 * Derives the machine-readable contracts of the hosted service (speech, transcription) from its
 * published documents, and writes them where the contract tests and docs/compatibility.md read them.
 *
 *   node scripts/contract/derive.mjs <checkout of smallest-inc/smallest-ai-documentation> [speech|transcription]
 *
 * The checkout's HEAD commit is recorded in the output. Parley's status of every item (`status`,
 * and `missing` for what a partly served item lacks) is a judgement, not a fact of the documents:
 * it is carried over from the existing output by item key, and an item new to the documents gets
 * `unreviewed`, which the contract test refuses until someone decides it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const REPOSITORY = 'smallest-inc/smallest-ai-documentation';
const WAVES = 'fern/apis/waves';
const here = path.dirname(fileURLToPath(import.meta.url));
const contractFile = (name) => path.join(here, '..', '..', 'test', 'contract', `waves-${name}.json`);

/** The documents whose operations are listed with their parameters, responses and errors. */
const SPEECH_DOCUMENTS = [
  { file: 'openapi/tts-openapi.yaml', overrides: 'openapi/tts-openapi-overrides.yaml' },
  { file: 'asyncapi/tts-ws.yaml', overrides: 'asyncapi/tts-ws-overrides.yml' },
  { file: 'openapi/get-voices-openapi.yaml', overrides: 'openapi/get-voices-openapi-overrides.yaml' },
  { file: 'openapi/voice-catalog-openapi.yaml' },
  { file: 'openapi/voice-cloning-openapi.yaml', overrides: 'openapi/voice-cloning-openapi-overrides.yaml' },
  { file: 'openapi/waves-api.yaml', overrides: 'openapi/waves-api-overrides.yaml' },
];

/** Documents of products Parley does not offer: their operations only. */
const OTHER_DOCUMENTS = [
  { file: 'openapi/electron-openapi.yaml', product: 'chat completions (Electron)' },
  { file: 'openapi/pca-openapi.yaml', product: 'post-call analysis' },
  { file: 'openapi/waves-analytics-openapi.yaml', product: 'usage analytics' },
  { file: 'asyncapi/hydra-ws.yaml', product: 'speech-to-speech (Hydra)' },
];

const TRANSCRIPTION_DOCUMENTS = [
  { file: 'openapi/stt-openapi.yaml' },
  { file: 'openapi/pulse-stt-openapi.yaml', overrides: 'openapi/pulse-stt-openapi-overrides.yaml' },
  { file: 'asyncapi/stt-live-ws.yaml' },
  { file: 'asyncapi/pulse-stt-ws.yaml', overrides: 'asyncapi/pulse-stt-ws-overrides.yml' },
];

/** Each contract: its documents, and those of products not offered (listed in the speech contract only). */
export const CONTRACTS = {
  speech: { documents: SPEECH_DOCUMENTS, other: OTHER_DOCUMENTS, out: contractFile('speech') },
  transcription: { documents: TRANSCRIPTION_DOCUMENTS, other: [], out: contractFile('transcription') },
};

/**
 * waves-api-overrides.yaml adds the model-named synthesis routes with only their `output_format`;
 * their bodies are the request schemas of waves-api.yaml named after the same model.
 */
const MODEL_ROUTE_BODIES = { lightning: 'LightningRequest', 'lightning-large': 'LightningLargeRequest', 'lightning-v2': 'Lightningv2Request' };

/**
 * Parameters a document states only in prose, each with the sentence that must still be there
 * (the derivation fails when it is gone, so the list never keeps what the documents dropped).
 */
const PROSE_PARAMETERS = {
  'WS /waves/v1/tts/live': [
    { says: 'with the `timeout` query parameter', parameter: { name: 'timeout', in: 'query', type: 'integer', minimum: 1, default: 60 } },
  ],
};

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];
const CONSTRAINTS = ['format', 'default', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems'];

/** Fern's overrides: objects merge key by key, anything else is replaced. */
function merge(base, over) {
  if (over === null || typeof over !== 'object' || Array.isArray(over)) return over ?? base;
  if (base === null || typeof base !== 'object' || Array.isArray(base)) return over;
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = key in base ? merge(base[key], value) : value;
  return out;
}

function load(root, file, overrides) {
  const doc = parse(readFileSync(path.join(root, WAVES, file), 'utf8'));
  return overrides ? merge(doc, parse(readFileSync(path.join(root, WAVES, overrides), 'utf8'))) : doc;
}

/** The node a local `$ref` (`#/components/schemas/Word`) points at. */
function at(doc, ref) {
  return ref.slice(2).split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~')).reduce((node, key) => node?.[key], doc);
}

function resolver(doc) {
  const deref = (node) => {
    let n = node;
    for (let i = 0; n && n.$ref && i < 10; i++) n = { ...at(doc, n.$ref), ...Object.fromEntries(Object.entries(n).filter(([k]) => k !== '$ref')) };
    return n;
  };
  return deref;
}

/** The name a node's `$ref` chain ends at (`#/components/schemas/AsyncAccepted` → AsyncAccepted). */
function refName(node, doc) {
  let name;
  for (let n = node, i = 0; n?.$ref && i < 10; i++) {
    name = n.$ref.split('/').at(-1);
    n = at(doc, n.$ref);
  }
  return name;
}

/**
 * Bounds a document states only in a parameter's prose, each with the sentence that says it: a
 * comma-separated list's most entries (`maxItems` of a string counts its entries).
 */
const PROSE_BOUNDS = [
  { says: /Up to ([\d,]+) keywords per session/, bound: 'maxItems' },
  { says: /Max ([\d,]+) keywords per session/, bound: 'maxItems' },
];

/** One field: its type and value space, as the document states them. */
function describe(schema, deref, extra = {}) {
  const s = deref(schema) ?? {};
  const out = { ...extra, type: s.type ?? (s.properties ? 'object' : 'string') };
  if (s.type === 'array' && s.items) out.items = deref(s.items).type ?? 'object';
  for (const key of CONSTRAINTS) if (s[key] !== undefined) out[key] = s[key];
  if (s.deprecated) out.deprecated = true;
  if (s.enum) out.values = s.enum.map((value) => ({ value }));
  for (const { says, bound } of PROSE_BOUNDS) {
    const stated = says.exec(s.description ?? '')?.[1];
    if (stated && out[bound] === undefined) out[bound] = Number(stated.replaceAll(',', ''));
  }
  // A frame field's description says which frames carry it: (present on `status: "chunk"` frames).
  const on = /present on `status: "([a-z_]+)"` frames/.exec(s.description ?? '')?.[1];
  if (on) out.frames = on;
  return out;
}

/**
 * The frames of an SSE example (`event: audio` + `data: {json}` blocks): each frame's fields with
 * the type and the value the example gives them.
 */
function sseFrames(example) {
  return String(example ?? '')
    .split(/\n\s*\n/)
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const event = /^event: *(.+)$/m.exec(block)?.[1]?.trim() ?? 'message';
      const data = JSON.parse(/^data: *(.+)$/m.exec(block)[1]);
      const fields = Object.entries(data).map(([name, value]) =>
        typeof value === 'string' && value.startsWith('<') ? { name, type: 'string' } : { name, type: typeof value, const: value },
      );
      return { event, fields };
    });
}

/** Every field of a response or frame, nested ones by dotted name (`voices[].tags.language`). */
function fieldsOf(schema, deref, prefix = '') {
  const s = deref(schema);
  if (!s) return [];
  const out = [];
  const required = new Set(s.required ?? []);
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    const p = deref(property);
    const full = prefix + name;
    out.push(describe(p, deref, { name: full, ...(required.has(name) ? { required: true } : {}) }));
    if (p.type === 'object' || p.properties) out.push(...fieldsOf(p, deref, `${full}.`));
    if (p.type === 'array' && p.items && (deref(p.items).properties)) out.push(...fieldsOf(p.items, deref, `${full}[].`));
  }
  return out;
}

function bodyParameters(schema, deref, where) {
  const s = deref(schema);
  const required = new Set(s?.required ?? []);
  return Object.entries(s?.properties ?? {}).map(([name, property]) => describe(property, deref, { name, in: where, ...(required.has(name) ? { required: true } : {}) }));
}

function openApiOperations(doc, source) {
  const deref = resolver(doc);
  const operations = [];
  for (const [route, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => {
        const param = deref(p);
        return describe(param.schema ?? {}, deref, { name: param.name, in: param.in, ...(param.required ? { required: true } : {}) });
      });
      const bodies = Object.entries(op.requestBody?.content ?? {});
      const modelName = route.match(/^\/waves\/v1\/([^/]+)\/(get_speech|stream)$/)?.[1];
      const [contentType, media] = bodies[0] ?? [];
      let bodySchema = media?.schema;
      if (modelName && MODEL_ROUTE_BODIES[modelName]) bodySchema = merge(deref({ $ref: `#/components/schemas/${MODEL_ROUTE_BODIES[modelName]}` }), deref(bodySchema ?? {}));
      if (bodies.length > 1) {
        // A body documented in several content types: each type is an item, and each object body's
        // fields are parameters of the requests of that type.
        for (const [type, m] of bodies) parameters.push(describe(m.schema ?? {}, deref, { name: type, in: 'content' }));
        for (const [type, m] of bodies) parameters.push(...bodyParameters(m.schema, deref, 'body').map((p) => ({ ...p, contentType: type })));
      } else if (bodySchema) parameters.push(...bodyParameters(bodySchema, deref, contentType === 'multipart/form-data' ? 'form' : 'body'));
      const responses = [];
      const errors = [];
      for (const [code, response] of Object.entries(op.responses ?? {})) {
        const r = deref(response);
        const entries = Object.entries(r.content ?? {});
        const item = {
          code,
          ...(entries[0] ? { contentType: entries[0][0] } : {}),
          ...(r.headers ? { headers: Object.entries(r.headers).map(([name, h]) => describe(deref(h).schema ?? {}, deref, { name })) } : {}),
          fields: entries[0] ? fieldsOf(entries[0][1].schema, deref) : [],
        };
        // A body of one of several shapes: each shape is an answer of its own, named after its schema.
        const variants = entries[0] && (deref(entries[0][1].schema)?.anyOf ?? deref(entries[0][1].schema)?.oneOf);
        if (variants) {
          for (const variant of variants) {
            (Number(code) < 400 ? responses : errors).push({ code, name: refName(variant, doc), contentType: entries[0][0], fields: fieldsOf(variant, deref) });
          }
          continue;
        }
        if (entries[0]?.[0] === 'text/event-stream') {
          for (const frame of sseFrames(entries[0][1].example ?? entries[0][1].schema?.example)) {
            (Number(code) < 400 ? responses : errors).push({ code, name: `event ${frame.event}${frame.fields.some((f) => f.const === true) ? ' (last)' : ''}`, contentType: 'text/event-stream', fields: frame.fields });
          }
        }
        (Number(code) < 400 ? responses : errors).push(item);
      }
      // A deprecated operation tells its callers so on every answer.
      if (op.deprecated) responses.push({ code: '200', name: 'deprecated', headers: [{ name: 'Deprecation', type: 'string', const: 'true' }], fields: [] });
      operations.push({
        id: `${method.toUpperCase()} ${route}`,
        document: `${WAVES}/${source}`,
        protocol: 'http',
        method: method.toUpperCase(),
        path: route,
        summary: op.summary ?? '',
        ...(op.deprecated ? { deprecated: true } : {}),
        ...(contentType ? { requestContentType: contentType } : {}),
        parameters,
        responses,
        errors,
      });
    }
  }
  return operations;
}

function asyncApiOperations(doc, source) {
  const deref = resolver(doc);
  const operations = [];
  for (const [, channel] of Object.entries(doc.channels ?? {})) {
    const parameters = Object.entries(channel.parameters ?? {}).map(([name, p]) => ({
      name,
      in: (p?.location ?? '').startsWith('$message.header') ? 'header' : 'query',
      type: 'string',
    }));
    parameters.push(...queryParameters(doc, channel, deref));
    const sends = [];
    const receives = [];
    for (const op of Object.values(doc.operations ?? {})) {
      if (deref(op.channel)?.address !== channel.address) continue;
      for (const m of op.messages ?? []) (op.action === 'send' ? sends : receives).push({ ...deref(m), name: deref(m).name ?? refName(m, doc) });
    }
    for (const { says, parameter } of PROSE_PARAMETERS[`WS ${channel.address}`] ?? []) {
      if (!String(channel.description ?? '').includes(says)) throw new Error(`${source}: the channel no longer says "${says}"`);
      parameters.push(parameter);
    }
    const messageParameters = [];
    for (const m of sends) {
      // Audio goes in binary frames: one item, whatever the document calls the message.
      if (deref(m.payload)?.format === 'binary') messageParameters.push({ name: 'audio', in: 'message', type: 'string', format: 'binary' });
      else messageParameters.push(...bodyParameters(m.payload, deref, 'message'));
    }
    parameters.push(...mergeByName(messageParameters));
    // A message the server sends only on failure is an error answer.
    const isError = (m) => /error/i.test(m.name ?? '');
    const frames = receives.filter((m) => !isError(m)).map((m) => ({ name: m.name, fields: fieldsOf(m.payload, deref) }));
    const errorSchema = doc.components?.schemas?.ErrorResponse;
    const errorFrames = receives.filter(isError).map((m) => ({ code: 'frame', name: m.name, contentType: 'application/json', fields: fieldsOf(m.payload, deref) }));
    if (errorSchema) errorFrames.push({ code: 'frame', name: 'ErrorResponse', contentType: 'application/json', fields: fieldsOf(errorSchema, deref) });
    operations.push({
      id: `WS ${channel.address}`,
      document: `${WAVES}/${source}`,
      protocol: 'websocket',
      method: 'GET',
      path: channel.address,
      summary: (doc.info?.title ?? '').trim(),
      parameters,
      responses: frames.map((f) => ({ code: 'frame', name: f.name, contentType: 'application/json', fields: f.fields })),
      errors: errorFrames,
    });
  }
  return operations;
}

/**
 * Parameters of the same name (the `type` of several control messages, a query parameter that
 * two servers of one path list) as one item: the first one's description, every value either
 * gives, and what the first leaves unsaid taken from the others.
 */
function mergeByName(parameters) {
  const byName = new Map();
  for (const p of parameters) {
    const seen = byName.get(p.name);
    if (!seen) {
      byName.set(p.name, { ...p });
      continue;
    }
    for (const [key, value] of Object.entries(p)) if (key !== 'values' && seen[key] === undefined) seen[key] = value;
    if (p.values) {
      const values = seen.values ?? [];
      for (const v of p.values) if (!values.some((w) => w.value === v.value)) values.push(v);
      seen.values = values;
    }
  }
  return [...byName.values()];
}

/**
 * The query parameters of a channel's connection, from the WebSocket bindings of the servers at
 * its address: the servers the channel names first (an override points the channel at its own),
 * then the others, merged by name.
 */
function queryParameters(doc, channel, deref) {
  const named = (channel.servers ?? []).map((ref) => ref.$ref?.split('/').at(-1));
  const servers = Object.entries(doc.servers ?? {})
    .filter(([name, server]) => named.includes(name) || server.pathname === channel.address)
    .sort(([a], [b]) => Number(!named.includes(a)) - Number(!named.includes(b)));
  const parameters = [];
  for (const [, server] of servers) {
    const query = deref(server.bindings?.ws?.query);
    if (query?.properties) parameters.push(...bodyParameters(query, deref, 'query'));
  }
  return mergeByName(parameters);
}

function otherOperations(doc, source, product) {
  if (doc.asyncapi) {
    return Object.values(doc.channels ?? {}).map((channel) => ({
      id: `WS ${channel.address}`, document: `${WAVES}/${source}`, protocol: 'websocket', method: 'GET', path: channel.address, product, summary: (doc.info?.title ?? '').trim(),
    }));
  }
  return Object.entries(doc.paths ?? {}).flatMap(([route, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({
      id: `${m.toUpperCase()} ${route}`, document: `${WAVES}/${source}`, protocol: 'http', method: m.toUpperCase(), path: route, product, summary: item[m].summary ?? '',
    })),
  );
}

/** The statuses of the previous output, by item key. */
function previousStatuses(file) {
  const statuses = new Map();
  if (!existsSync(file)) return statuses;
  const old = JSON.parse(readFileSync(file, 'utf8'));
  for (const op of [...old.operations, ...old.notOffered]) {
    const keep = (key, item) => statuses.set(key, { status: item.status, ...(item.missing ? { missing: item.missing } : {}) });
    keep(op.id, op);
    for (const p of op.parameters ?? []) {
      keep(`${op.id} ${p.in}:${p.name}`, p);
      for (const v of p.values ?? []) keep(`${op.id} ${p.in}:${p.name}=${v.value}`, v);
    }
    for (const [kind, list] of [['response', op.responses], ['error', op.errors]]) {
      for (const r of list ?? []) {
        keep(`${op.id} ${kind}:${r.code}:${r.name ?? ''}`, r);
        for (const h of r.headers ?? []) keep(`${op.id} ${kind}:${r.code}:${r.name ?? ''} header:${h.name}`, h);
        for (const f of r.fields ?? []) {
          keep(`${op.id} ${kind}:${r.code}:${r.name ?? ''} field:${f.name}`, f);
          for (const v of f.values ?? []) keep(`${op.id} ${kind}:${r.code}:${r.name ?? ''} field:${f.name}=${v.value}`, v);
        }
      }
    }
  }
  return statuses;
}

/** Puts `status` (and `missing`) right after an item's identifying keys, carried over or `unreviewed`. */
function withStatus(item, key, statuses, idKeys) {
  const known = statuses.get(key) ?? { status: 'unreviewed' };
  const head = Object.fromEntries(Object.entries(item).filter(([k]) => idKeys.includes(k)));
  const rest = Object.fromEntries(Object.entries(item).filter(([k]) => !idKeys.includes(k)));
  return { ...head, ...known, ...rest };
}

function annotate(op, statuses) {
  const ids = ['id', 'name', 'in', 'value', 'code'];
  const fields = (list, prefix) =>
    list.map((f) => {
      const field = withStatus(f, `${prefix} field:${f.name}`, statuses, ids);
      if (field.values) field.values = field.values.map((v) => withStatus(v, `${prefix} field:${f.name}=${v.value}`, statuses, ids));
      return field;
    });
  const out = withStatus(op, op.id, statuses, ids);
  if (op.parameters) {
    out.parameters = op.parameters.map((p) => {
      const key = `${op.id} ${p.in}:${p.name}`;
      const param = withStatus(p, key, statuses, ids);
      if (param.values) param.values = param.values.map((v) => withStatus(v, `${key}=${v.value}`, statuses, ids));
      return param;
    });
  }
  for (const [kind, list] of [['response', 'responses'], ['error', 'errors']]) {
    if (!op[list]) continue;
    out[list] = op[list].map((r) => {
      const prefix = `${op.id} ${kind}:${r.code}:${r.name ?? ''}`;
      const item = withStatus(r, prefix, statuses, ids);
      if (item.headers) item.headers = item.headers.map((h) => withStatus(h, `${prefix} header:${h.name}`, statuses, ids));
      item.fields = fields(r.fields, prefix);
      return item;
    });
  }
  return out;
}

/** JSON with every object of plain values on one line, so a status is a one-word edit on a short line. */
export function formatContract(value, indent = '') {
  const flat = (v) => v === null || typeof v !== 'object' || (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object'));
  if (flat(value)) return JSON.stringify(value).replaceAll('","', '", "').replaceAll(',"', ', "');
  const inner = indent + '  ';
  if (Array.isArray(value)) return `[\n${value.map((v) => inner + formatContract(v, inner)).join(',\n')}\n${indent}]`;
  const entries = Object.entries(value);
  if (entries.every(([, v]) => flat(v))) return `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${formatContract(v)}`).join(', ')} }`;
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${formatContract(v, inner)}`).join(',\n')}\n${indent}}`;
}

export function derive(root, name, out = CONTRACTS[name].out) {
  const { documents, other } = CONTRACTS[name];
  const commit = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const statuses = previousStatuses(out);
  const operations = documents.flatMap(({ file, overrides }) => {
    const doc = load(root, file, overrides);
    return doc.asyncapi ? asyncApiOperations(doc, file) : openApiOperations(doc, file);
  }).map((op) => annotate(op, statuses));
  const notOffered = other.flatMap(({ file, product }) => otherOperations(load(root, file), file, product)).map((op) => annotate(op, statuses));
  return {
    $comment:
      'Derived by `node scripts/contract/derive.mjs <checkout of the repository>` from the documents named here, keeping the statuses: edit only status (served, partial, not-served) and missing (what a partial item lacks), then run `npm run docs:compatibility`.',
    source: { repository: REPOSITORY, commit, documents: [...documents, ...other].map((d) => `${WAVES}/${d.file}`) },
    operations,
    notOffered,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [root, ...names] = process.argv.slice(2);
  if (!root || names.some((n) => !CONTRACTS[n])) {
    console.error('usage: node scripts/contract/derive.mjs <checkout of smallest-inc/smallest-ai-documentation> [speech|transcription ...]');
    process.exit(2);
  }
  for (const name of names.length ? names : Object.keys(CONTRACTS)) {
    const { out } = CONTRACTS[name];
    writeFileSync(out, formatContract(derive(root, name, out)) + '\n');
    console.log(`wrote ${out}`);
  }
}
