import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { InvalidRequestError, NotFoundError } from '../../errors.js';
import { DictionaryLimitError, type PronunciationDictRepository, type PronunciationItem } from '../../store/pronunciation-dict-repository.js';
import type { PronunciationDictCache } from '../../synthesis/pronunciation-dict-cache.js';
import { DictId, speechErrorsOf } from '../schemas/common.js';
import type { RouteLayout } from './product-names.js';

const Item = Type.Object({
  word: Type.String({ minLength: 1, maxLength: 200 }),
  pronunciation: Type.String({ minLength: 1, maxLength: 500 }),
});
const Dict = Type.Object({ id: Type.String(), items: Type.Array(Item), createdAt: Type.String() });
const IdBody = Type.Object({ id: DictId });

export interface PronunciationDictRouteOptions {
  dicts: PronunciationDictRepository;
  /** Compiles a dictionary as it is saved (so no request pays for it) and drops it when deleted. */
  cache?: Pick<PronunciationDictCache, 'remember' | 'forget'>;
  limits: { maxDictEntries: number; maxDictsPerAccount: number };
  layout?: RouteLayout;
}

/** List, create, replace and delete the caller's dictionaries; another account's ids answer 404. */
export function pronunciationDictRoutes(deps: PronunciationDictRouteOptions) {
  const wire = (d: { id: string; items: PronunciationItem[]; createdAt: string }) => ({ id: d.id, items: d.items, createdAt: d.createdAt });
  const Items = Type.Array(Item, { minItems: 1, maxItems: deps.limits.maxDictEntries });
  const speechErrors = speechErrorsOf(deps.layout);
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['pronunciation-dicts'];
    app.get('/pronunciation-dicts', {
      schema: { tags, summary: "List the caller's dictionaries", response: { 200: Type.Array(Dict), ...speechErrors } },
      handler: async (request) => (await deps.dicts.list(request.accountId)).map(wire),
    });
    app.post('/pronunciation-dicts', {
      schema: {
        tags,
        summary: `Create a dictionary (at most ${deps.limits.maxDictsPerAccount} per account)`,
        body: Type.Object({ items: Items }),
        response: { 200: Dict, ...speechErrors },
      },
      handler: async (request) => {
        const { items } = request.body;
        try {
          const created = await deps.dicts.create(request.accountId, items, { maxPerAccount: deps.limits.maxDictsPerAccount });
          await deps.cache?.remember(created);
          return wire(created);
        } catch (err) {
          if (err instanceof DictionaryLimitError) {
            throw new InvalidRequestError(`an account may hold at most ${err.limit} pronunciation dictionaries; delete one first`);
          }
          throw err;
        }
      },
    });
    app.put('/pronunciation-dicts', {
      schema: {
        tags,
        summary: "Replace a dictionary's items",
        body: Type.Object({ id: DictId, items: Items }),
        response: { 200: Dict, ...speechErrors },
      },
      handler: async (request) => {
        const { id, items } = request.body;
        const updated = await deps.dicts.update(request.accountId, id, items);
        if (!updated) throw new NotFoundError(`No pronunciation dictionary ${id}`);
        await deps.cache?.remember(updated);
        return wire(updated);
      },
    });
    app.delete('/pronunciation-dicts', {
      schema: {
        tags,
        summary: 'Delete a dictionary',
        body: IdBody,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }), ...speechErrors },
      },
      handler: async (request) => {
        const { id } = request.body;
        if (!(await deps.dicts.delete(request.accountId, id))) throw new NotFoundError(`No pronunciation dictionary ${id}`);
        deps.cache?.forget(id);
        return { id, deleted: true };
      },
    });
  };
}
