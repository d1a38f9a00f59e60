import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import type { PayoutsTelemetry } from '../interfaces/payouts-instrumentation.interface.js';

/** The `telemetry` option, checked: a value that cannot build an instrumentation fails at bootstrap. */
export function resolvePayoutsTelemetry(telemetry: unknown): PayoutsTelemetry | undefined {
  if (telemetry === undefined) return undefined;
  if (
    typeof telemetry !== 'object' ||
    telemetry === null ||
    typeof (telemetry as PayoutsTelemetry).instrument !== 'function'
  ) {
    throw new PayoutsConfigError('telemetry', 'the result of payoutsOpenTelemetry() (nestjs-payouts/opentelemetry)');
  }
  return telemetry as PayoutsTelemetry;
}
