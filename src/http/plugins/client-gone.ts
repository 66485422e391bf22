/**
 * `request.clientGone`: an AbortSignal that fires when the client goes away before its response
 * is finished (the connection closed, or cut because the client stopped reading). A route hands it
 * to the use case, so work for a client that left stops instead of running on for nobody.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** Aborted when the client disconnects before the response has been sent whole. */
    readonly clientGone: AbortSignal;
  }
}

const replyOf = Symbol('reply');
const signalOf = Symbol('clientGone');

interface Tracked {
  [replyOf]: FastifyReply | null;
  [signalOf]: AbortSignal | null;
}

export function useClientGone(app: FastifyInstance): void {
  app.decorateRequest(replyOf, null);
  app.decorateRequest(signalOf, null);
  app.decorateRequest('clientGone', {
    getter(this: FastifyRequest) {
      const tracked = this as unknown as Tracked;
      if (tracked[signalOf]) return tracked[signalOf];
      const controller = new AbortController();
      tracked[signalOf] = controller.signal;
      const raw = tracked[replyOf]!.raw;
      const onClose = () => {
        if (!raw.writableFinished) controller.abort();
      };
      // Asked for after the client already left: the work it guards must not start.
      if (raw.destroyed) onClose();
      else raw.once('close', onClose);
      return controller.signal;
    },
  });
  // Made on first use only, so a request that never asks costs one property write.
  app.addHook('onRequest', (request, reply, done) => {
    (request as unknown as Tracked)[replyOf] = reply;
    done();
  });
}
