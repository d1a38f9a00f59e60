import type { AdapterName } from '../settings.js';

/** Package route ÷ plain Nest route: the targets of the benchmark. */
export const PLAIN_ROUTE_TARGETS: Record<AdapterName, number> = { express: 0.97, fastify: 0.85 };
/** Hand-written route's CPU per request ÷ the package's, and package ÷ hand-written throughput, in every mode. */
export const HAND_WRITTEN_TARGETS: Record<AdapterName, number> = { express: 1.4, fastify: 1.6 };
/** The same, for the in-memory route on Fastify. */
export const HAND_WRITTEN_MEMORY_FASTIFY_TARGET = 2.2;
