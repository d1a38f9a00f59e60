import type { Tracer } from '@opentelemetry/api';
import type { OpenTelemetryApi } from './open-telemetry-api.js';
import type { PayoutsInstruments } from './payouts-instruments.js';

/** What the spans of one registration (account) share. */
export interface RegistrationTelemetry {
  readonly api: OpenTelemetryApi;
  readonly tracer: Tracer;
  readonly instruments: PayoutsInstruments;
  readonly account: string;
}
