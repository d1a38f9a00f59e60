import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';

/** The runtime of `@opentelemetry/api`, as this add-on uses it. */
export type OpenTelemetryApi = typeof Api;

/**
 * Loads `@opentelemetry/api` when a registration is instrumented, not when this entry point is imported: an app may
 * import `nestjs-payouts/opentelemetry` and leave telemetry off without having the package. The API keeps its state
 * (providers, context manager, propagator) in one global per major version, so this copy sees what the app's SDK
 * registered, whichever copy the app imports.
 */
export function loadOpenTelemetryApi(): OpenTelemetryApi {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as OpenTelemetryApi;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    throw new PayoutsConfigError(
      'telemetry',
      'payoutsOpenTelemetry() with the @opentelemetry/api package installed (npm install @opentelemetry/api)',
    );
  }
}
