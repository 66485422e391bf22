/**
 * GET /v1/models and /v1/models/{id} (OpenAI's list: the aliases, the generations with voices,
 * the loaded packs), GET /v1/audio/voices (a model's voices, with the OpenAI names that speak
 * with each), GET /v1/audio/models (the speech models, in the shape chat UIs read) and GET /v1/packs (Parley's addition: installed packs with their state, and the
 * catalogue's packs not installed yet, for the playground; why a pack was skipped for admin keys only;
 * what transcription lacks, with the packs to install).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { KEY_ROLES } from '../../../accounts/api-keys.js';
import { openAiVoiceNames } from '../../../config.js';
import type { CatalogueEntry } from '../../../models/catalogue.js';
import type { ModelsReport } from '../../../models/installed-models.js';
import { missingPacksMessage, missingTranscriptionPacks, transcriptionPacksOf } from '../../../models/missing-packs.js';
import { NotFoundError } from '../../../errors.js';
import { modelLanguages } from '../../../synthesis/languages.js';
import { ModelIdParams, OpenAiModel, OpenAiModelList, OpenAiVoiceList, PackList, SpeechModelList, VoicesQuery, type OpenAiModelBody } from '../../schemas/openai-models.js';
import { generations, speechModelAliases, transcriptionModelAliases, type SpeechModels } from './aliases.js';

export interface ModelRouteOptions {
  models: SpeechModels;
  speechModel: string;
  report(): ModelsReport;
  catalogue(): CatalogueEntry[];
}

function taskOf(kind: string): 'speech' | 'transcription' | 'other' {
  return kind.startsWith('tts-') ? 'speech' : kind.startsWith('asr-') ? 'transcription' : 'other';
}

export function openAiModelRoutes(options: ModelRouteOptions) {
  function list(): OpenAiModelBody[] {
    const report = options.report();
    const created = Math.floor(Date.parse(report.loadedAt) / 1000);
    const model = (id: string, parley: OpenAiModelBody['parley']): OpenAiModelBody => ({ id, object: 'model', created, owned_by: 'parley', parley });
    const recognizerLanguages = [...new Set(report.loaded.filter((p) => taskOf(p.kind) === 'transcription').flatMap((p) => p.languages))];
    return [
      ...speechModelAliases.map((id) => model(id, { kind: 'alias', task: 'speech', alias_of: options.speechModel, languages: options.models.voicesOf(id)?.flatMap((v) => v.languages).filter((l, i, all) => all.indexOf(l) === i) ?? [] })),
      ...transcriptionModelAliases.map((id) => model(id, { kind: 'alias', task: 'transcription', alias_of: 'stt', languages: recognizerLanguages })),
      ...generations.filter((g) => options.models.voicesOf(g)?.length).map((g) => model(g, { kind: 'generation', task: 'speech', languages: [...modelLanguages[g]] })),
      ...report.loaded.map((p) => model(p.id, { kind: p.kind, task: taskOf(p.kind), languages: p.languages })),
    ];
  }

  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    const config = { rateFamily: 'management' as const };
    app.get('/models', {
      config,
      schema: { tags: ['openai'], summary: 'Models: the OpenAI aliases, the generations and the loaded packs', response: { 200: OpenAiModelList } },
      handler: async () => ({ object: 'list' as const, data: list() }),
    });
    app.get('/models/:id', {
      config,
      schema: { tags: ['openai'], summary: 'One model', params: ModelIdParams, response: { 200: OpenAiModel } },
      handler: async (request) => {
        const { id } = request.params;
        const found = list().find((m) => m.id === id);
        if (!found) throw new NotFoundError(`The model "${id}" does not exist`);
        return found;
      },
    });
    app.get('/audio/voices', {
      config,
      schema: { tags: ['openai'], summary: "A model's voices, with the OpenAI voice names that speak with each", querystring: VoicesQuery, response: { 200: OpenAiVoiceList } },
      handler: async (request) => {
        const model = request.query.model ?? speechModelAliases[0];
        const voices = options.models.voicesOf(model);
        if (!voices) throw new NotFoundError(`The model "${model}" does not exist: see GET /v1/models`);
        const aliases = new Map<string, string[]>();
        if (voices.length) {
          for (const name of openAiVoiceNames) {
            const id = options.models.resolve(model, name).voice.id;
            aliases.set(id, [...(aliases.get(id) ?? []), name]);
          }
        }
        return {
          model,
          voices: voices.map((v) => ({
            id: v.id,
            name: v.displayName,
            languages: v.languages,
            gender: v.gender,
            accent: v.accent,
            engine: v.engine,
            sample_rate: v.sampleRate,
            aliases: aliases.get(v.id) ?? [],
          })),
        };
      },
    });
    app.get('/audio/models', {
      config,
      schema: { tags: ['openai'], summary: 'The models /v1/audio/speech takes, as {models: [{id}]} (what Open WebUI reads)', response: { 200: SpeechModelList } },
      handler: async () => ({ models: list().filter((m) => m.parley.task === 'speech').map((m) => ({ id: m.id })) }),
    });
    app.get('/packs', {
      config,
      schema: { tags: ['openai'], summary: 'Parley: installed model packs with their state, and catalogue packs not installed', response: { 200: PackList } },
      handler: async (request) => {
        const report = options.report();
        // Why a pack was skipped names files on the server's disk: operator detail, for admin keys only.
        const detail = request.keyRole === KEY_ROLES.admin;
        const installed = [
          ...report.loaded.map((p) => ({ id: p.id, kind: p.kind, state: 'loaded', languages: p.languages })),
          ...report.skipped.map((p) => ({ id: p.id, kind: 'unknown', state: 'skipped', languages: [], ...(detail && { reason: p.reason }) })),
        ];
        const ids = new Set(installed.map((p) => p.id));
        const available = options
          .catalogue()
          .filter((e) => !ids.has(e.id))
          .map((e) => ({ id: e.id, kind: e.kind, description: e.description, languages: e.languages, size: e.size, licence: e.licence }));
        const missing = missingTranscriptionPacks(transcriptionPacksOf(report.loaded), 'en', options.catalogue());
        const transcription = { missing: missing.map((m) => ({ role: m.role, pack: m.pack ?? null })), ...(missing.length ? { message: missingPacksMessage(missing) } : {}) };
        return { installed, available, transcription };
      },
    });
  };
}
