import type { FastifyInstance } from 'fastify';

/** A function that adds routes to a family plugin. */
export type RouteRegistrar = (app: FastifyInstance) => Promise<void>;
