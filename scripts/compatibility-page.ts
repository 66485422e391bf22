/**
 * docs/compatibility.md, made from the contract lists (test/contract/waves-speech.json and
 * waves-transcription.json): each operation of the hosted service's speech and transcription APIs
 * as served, partly served (what is missing) or not served, with the counts of their items per
 * document and per operation, and the operations of its other products.
 *   node --import tsx scripts/compatibility-page.ts          prints the page
 *   node --import tsx scripts/compatibility-page.ts --write  rewrites docs/compatibility.md
 * test/contract/compatibility-page.test.ts fails when the committed page and the list differ.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  countStatuses,
  judgedItems,
  loadContract,
  statusCounts,
  type Answer,
  type Contract,
  type ContractName,
  type EnumValue,
  type Field,
  type Judged,
  type Operation,
  type StatusCounts,
} from './contract/contract.js';

export const pagePath = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'compatibility.md');

const WORDS = { served: 'served', partial: 'partly served', 'not-served': 'not served', unreviewed: 'not yet reviewed' } as const;

const code = (text: unknown) => '`' + String(text) + '`';
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** "partly served: what is missing", or the bare status. */
function statusLine(item: Judged): string {
  return WORDS[item.status] + (item.status !== 'served' && item.missing ? `: ${item.missing}` : '');
}

/** The enum values not served, as a clause. */
function valuesNotServed(values: EnumValue[] | undefined): string {
  const refused = (values ?? []).filter((v) => v.status === 'not-served').map((v) => code(v.value));
  return refused.length ? `; not served: ${refused.join(', ')}` : '';
}

function fieldLine(f: Field): string {
  // A field not served has none of its values either.
  return `${statusLine(f)}${f.status === 'not-served' ? '' : valuesNotServed(f.values)}`;
}

function answerSection(answer: Answer): string[] {
  const head = `${answer.code === 'frame' ? 'Frame' : answer.code}${answer.name ? ` ${answer.name}` : ''}${answer.contentType ? ` (${answer.contentType})` : ''}`;
  const parts = [...(answer.headers ?? []).map((h) => ({ name: `header ${h.name}`, item: h })), ...answer.fields.map((f) => ({ name: f.name, item: f }))];
  const notFull = parts.filter(({ item }) => item.status !== 'served' || (item.values ?? []).some((v) => v.status !== 'served'));
  const lines = [`- **${head}**: ${statusLine(answer)}`];
  for (const { name, item } of notFull) lines.push(`  - ${code(name)}: ${fieldLine(item)}`);
  return lines;
}

function operationSection(op: Operation): string[] {
  const lines = [`### ${op.id}${op.deprecated ? ' (deprecated)' : ''}`, '', `${op.summary ? `${op.summary}. ` : ''}From ${code(op.document)}. **${statusLine(op)}.**`, ''];
  if (op.status === 'not-served') return lines;
  const params = op.parameters ?? [];
  if (params.length) {
    lines.push('| Parameter | In | Status |', '|---|---|---|');
    for (const p of params) lines.push(`| ${code(p.name)} | ${p.in} | ${cell(fieldLine(p))} |`);
    lines.push('');
  }
  const answers = [...(op.responses ?? []), ...(op.errors ?? [])];
  if (answers.length) lines.push('Answers:', '', ...answers.flatMap(answerSection), '');
  return lines;
}

/** The contracts of the page, each under its heading. */
export type Contracts = Record<ContractName, Contract>;

const HEADINGS: Record<ContractName, string> = { speech: 'Speech', transcription: 'Transcription' };

export function loadContracts(): Contracts {
  return { speech: loadContract('speech'), transcription: loadContract('transcription') };
}

const countsLine = (counts: StatusCounts) => `${counts.served} served, ${counts.partial} partly served, ${counts['not-served']} not served`;
const countCells = (counts: StatusCounts) => `${counts.served} | ${counts.partial} | ${counts['not-served']}`;

/** Every document's item counts: those of the offered operations first, in the order the lists name them. */
function documentRows(contracts: Contract[]): string[] {
  const others = new Set(contracts.flatMap((c) => c.notOffered.map((op) => op.document)));
  const named = [...new Set(contracts.flatMap((c) => c.source.documents))];
  const documents = [...named.filter((d) => !others.has(d)), ...named.filter((d) => others.has(d))];
  return documents.map((document) => {
    const ops = contracts.flatMap((c) => [...c.operations, ...c.notOffered]).filter((op) => op.document === document);
    return `| ${code(path.basename(document))} | ${countCells(countStatuses(ops.flatMap(judgedItems)))} |`;
  });
}

function contractSections(name: ContractName, contract: Contract): string[] {
  const heading = HEADINGS[name];
  return [
    `## ${heading}: operations`,
    '',
    `Items of ${code(`test/contract/waves-${name}.json`)}: ${countsLine(statusCounts(contract))}.`,
    '',
    '| Operation | Served | Partly | Not | Status |',
    '|---|---|---|---|---|',
    ...contract.operations.map((op) => `| ${code(op.id)} | ${countCells(countStatuses(judgedItems(op)))} | ${cell(statusLine(op))} |`),
    '',
    `## ${heading}: operations in detail`,
    '',
    'Parameters are listed with their status; answers list only what is not fully served.',
    '',
    ...contract.operations.flatMap(operationSection),
  ];
}

export function compatibilityPage(contracts: Contracts): string {
  const all = Object.values(contracts);
  const counts = countStatuses(all.flatMap((c) => [...c.operations, ...c.notOffered].flatMap(judgedItems)));
  const { repository, commit } = contracts.speech.source;
  const names = Object.keys(contracts) as ContractName[];
  const notOffered = all.flatMap((c) => c.notOffered);
  const lines = [
    '# Compatibility with the hosted speech API',
    '',
    '[← README](../README.md)',
    '',
    `<!-- Generated by scripts/compatibility-page.ts from ${names.map((n) => `test/contract/waves-${n}.json`).join(' and ')}: edit the lists, then run \`npm run docs:compatibility\`. -->`,
    '',
    `Parley serves the speech and transcription APIs of the hosted service as its published documents describe them: ${code(`${repository}@${commit.slice(0, 7)}`)}.`,
    `Every operation, parameter, enum value, response field and error body of those documents is listed in ${names.map((n) => code(`test/contract/waves-${n}.json`)).join(' and ')}`,
    `with its status here, and ${names.map((n) => code(`test/contract/waves-${n}.test.ts`)).join(' and ')} check each against a running server:`,
    'what is **served** answers as documented (and what the document rules out is refused with a 400 naming it),',
    'what is **partly served** answers but lacks what is said, and what is **not served** is refused with a clear error (or, for a field of an answer, is not sent).',
    '',
    `Items: ${countsLine(counts)}.`,
    '',
    '## Documents',
    '',
    '| Document | Served | Partly | Not |',
    '|---|---|---|---|',
    ...documentRows(all),
    '',
    ...names.flatMap((name) => contractSections(name, contracts[name])),
    '## Other products',
    '',
    'These operations of the service are not offered: each answers `501` with `{"status": "error", "error": "NotImplemented", "message": "… is not offered by this server", "request_id": …}` (a WebSocket upgrade is refused the same way).',
    '',
    '| Operation | Product | Status |',
    '|---|---|---|',
    ...notOffered.map((op) => `| ${code(op.id)} | ${op.product ?? ''} | ${cell(statusLine(op))} |`),
  ];
  return lines.join('\n') + '\n';
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const page = compatibilityPage(loadContracts());
  if (process.argv.includes('--write')) writeFileSync(pagePath, page);
  else process.stdout.write(page);
}
