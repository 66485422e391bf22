/**
 * The service's published contracts as test/contract/waves-speech.json and waves-transcription.json
 * list them (derived by scripts/contract/derive.mjs), with Parley's status of every item: their
 * types, the walk over their items, and the counts. Read by the contract tests and by the
 * compatibility page's generator.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Status = 'served' | 'partial' | 'not-served';
export const STATUSES: readonly Status[] = ['served', 'partial', 'not-served'];

export interface Judged {
  /** Parley's status; `unreviewed` when the derivation met an item nobody has judged yet. */
  status: Status | 'unreviewed';
  /** What a partly served item lacks (or why an item is not served). */
  missing?: string;
}

export interface EnumValue extends Judged {
  value: string | number | boolean;
}

/** A field of a response, a frame or an error body; nested fields by dotted name (`voices[].tags.language`). */
export interface Field extends Judged {
  name: string;
  type: string;
  items?: string;
  format?: string;
  const?: unknown;
  required?: boolean;
  /** The frames that carry it (a WebSocket frame's `status`). */
  frames?: string;
  values?: EnumValue[];
}

export interface Parameter extends Field {
  /** `content`: one of several documented body types, named by its content type. */
  in: 'body' | 'form' | 'query' | 'header' | 'path' | 'message' | 'content';
  /** For a body field of one of several body types: the type whose body carries it. */
  contentType?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  /** For a comma-separated string: its most entries. */
  maxItems?: number;
}

export interface Answer extends Judged {
  /** An HTTP status, or `frame` for a WebSocket message. */
  code: string;
  name?: string;
  contentType?: string;
  headers?: Field[];
  fields: Field[];
}

export interface Operation extends Judged {
  id: string;
  document: string;
  protocol: 'http' | 'websocket';
  method: string;
  path: string;
  summary: string;
  deprecated?: boolean;
  product?: string;
  requestContentType?: string;
  parameters?: Parameter[];
  responses?: Answer[];
  errors?: Answer[];
}

export interface Contract {
  source: { repository: string; commit: string; documents: string[] };
  operations: Operation[];
  notOffered: Operation[];
}

/** The contracts, each in its own list. */
export const CONTRACT_NAMES = ['speech', 'transcription'] as const;
export type ContractName = (typeof CONTRACT_NAMES)[number];

export const contractPath = (name: ContractName): string => path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'contract', `waves-${name}.json`);

export function loadContract(name: ContractName): Contract {
  return JSON.parse(readFileSync(contractPath(name), 'utf8')) as Contract;
}

/** A judged item with a readable key; an enum value's parent is its parameter or field (whose `missing` may speak for it). */
export interface JudgedItem {
  key: string;
  item: Judged;
  parent?: Judged;
}

/** Every judged item of an operation: the operation, parameters, values, answers, headers, fields. */
export function judgedItems(op: Operation): JudgedItem[] {
  const out: JudgedItem[] = [{ key: op.id, item: op }];
  const withValues = (key: string, f: Field) => {
    out.push({ key, item: f });
    for (const v of f.values ?? []) out.push({ key: `${key}=${String(v.value)}`, item: v, parent: f });
  };
  for (const p of op.parameters ?? []) withValues(`${op.id} ${p.in} ${p.name}`, p);
  for (const a of [...(op.responses ?? []), ...(op.errors ?? [])]) {
    const key = `${op.id} → ${a.code}${a.name ? ` ${a.name}` : ''}`;
    out.push({ key, item: a });
    for (const h of a.headers ?? []) withValues(`${key} header ${h.name}`, h);
    for (const f of a.fields) withValues(`${key} ${f.name}`, f);
  }
  return out;
}

export function allJudgedItems(contract: Contract): JudgedItem[] {
  return [...contract.operations, ...contract.notOffered].flatMap(judgedItems);
}

export type StatusCounts = Record<Status | 'unreviewed', number>;

/** How many of the items have each status. */
export function countStatuses(items: JudgedItem[]): StatusCounts {
  const counts = { served: 0, partial: 0, 'not-served': 0, unreviewed: 0 };
  for (const { item } of items) counts[item.status] += 1;
  return counts;
}

/** How many items of a contract have each status. */
export function statusCounts(contract: Contract): StatusCounts {
  return countStatuses(allJudgedItems(contract));
}
