/**
 * The webhook signing secret of the caller's account (admin keys only, as every /admin route):
 * read it, or rotate it with an overlap during which deliveries carry signatures with both the
 * new and the old secret, so a receiver can switch without rejecting a delivery.
 */
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../../accounts/api-keys.js';
import { NotFoundError } from '../../errors.js';
import { speechErrors } from '../schemas/common.js';

/** A week: longer would keep a leaked secret valid for longer than any receiver needs to switch. */
const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;

const SecretState = Type.Object({
  webhook_secret: Type.String({ description: 'Signs every delivery (X-Webhook-Signature v1)' }),
  previous_secret_valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Until when deliveries also carry a signature with the secret replaced by the last rotation; null when they do not',
  }),
});

const RotateBody = Type.Object(
  {
    overlap_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_OVERLAP_SECONDS, description: 'How long the old secret keeps signing beside the new one (default: the server setting, 86400)' }),
    ),
  },
  { additionalProperties: false },
);

export function webhookSecretRoutes(deps: { apiKeys: ApiKeyService; defaultOverlapSeconds: number }) {
  return async function register(instance: FastifyInstance): Promise<void> {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/admin/webhook-secret', {
      config: { rateFamily: 'management' },
      schema: { tags: ['admin'], summary: "The account's webhook signing secret", response: { 200: SecretState, ...speechErrors } },
      handler: async (request) => {
        const state = await deps.apiKeys.accountWebhookSecret(request.accountId);
        if (!state) throw new NotFoundError('The account of this key no longer exists');
        return { webhook_secret: state.secret, previous_secret_valid_until: state.previousValidUntil };
      },
    });
    app.post('/admin/webhook-secret/rotate', {
      config: { rateFamily: 'management' },
      schema: {
        tags: ['admin'],
        summary: "Replace the account's webhook secret; the old one keeps signing beside it for overlap_seconds",
        body: RotateBody,
        response: { 200: SecretState, ...speechErrors },
      },
      handler: async (request) => {
        const overlap = request.body?.overlap_seconds ?? Math.min(deps.defaultOverlapSeconds, MAX_OVERLAP_SECONDS);
        const rotated = await deps.apiKeys.rotateWebhookSecret(request.accountId, overlap);
        request.log.info({ accountId: request.accountId, overlapSeconds: overlap }, 'webhook secret rotated');
        return { webhook_secret: rotated.secret, previous_secret_valid_until: rotated.previousValidUntil };
      },
    });
  };
}
