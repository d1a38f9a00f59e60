import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import type {
  PayoutsInstrumentation,
  PayoutsTelemetry,
  PayoutsTelemetryRegistration,
} from '../interfaces/payouts-instrumentation.interface.js';
import { PAYOUTS_PACKAGE_VERSION } from '../payouts/payouts-user-agent.js';
import { loadOpenTelemetryApi } from './open-telemetry-api.js';
import { OpenTelemetryInstrumentation } from './open-telemetry-instrumentation.js';
import { createPayoutsInstruments, type PayoutsInstruments } from './payouts-instruments.js';
import { INSTRUMENTATION_SCOPE } from './telemetry-names.js';

export interface PayoutsOpenTelemetryOptions {
  /** Where the spans go. Default: the global tracer provider, as the OpenTelemetry SDK registers it. */
  tracerProvider?: TracerProvider;
  /** Where the metrics go. Default: the global meter provider, as the OpenTelemetry SDK registers it. */
  meterProvider?: MeterProvider;
}

const OPTION_KEYS = optionKeys<PayoutsOpenTelemetryOptions>()('tracerProvider', 'meterProvider');
const OWNER = 'payoutsOpenTelemetry()';

/**
 * Traces and metrics through OpenTelemetry, for the `telemetry` option of `PayoutsModule`:
 * `PayoutsModule.forRoot({ …, telemetry: payoutsOpenTelemetry() })`. `@opentelemetry/api` is loaded, and the global
 * providers read, when the module boots, so start the SDK before `NestFactory.create()`. One result may serve
 * several registrations: each records its own account.
 */
export function payoutsOpenTelemetry(options: PayoutsOpenTelemetryOptions = {}): PayoutsTelemetry {
  if (typeof options !== 'object' || options === null) {
    throw new PayoutsConfigError('options', 'an object with tracerProvider and meterProvider, or nothing', OWNER);
  }
  rejectUnknownKeys(options, OPTION_KEYS, '', OWNER);
  const { tracerProvider, meterProvider } = options;
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== 'function') {
    throw new PayoutsConfigError('tracerProvider', 'a TracerProvider (with getTracer)', OWNER);
  }
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== 'function') {
    throw new PayoutsConfigError('meterProvider', 'a MeterProvider (with getMeter)', OWNER);
  }
  let instruments: PayoutsInstruments | undefined;
  return {
    instrument({ account }: PayoutsTelemetryRegistration): PayoutsInstrumentation {
      const api = loadOpenTelemetryApi();
      const tracer = (tracerProvider ?? api.trace.getTracerProvider()).getTracer(
        INSTRUMENTATION_SCOPE,
        PAYOUTS_PACKAGE_VERSION,
      );
      instruments ??= createPayoutsInstruments(
        (meterProvider ?? api.metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE, PAYOUTS_PACKAGE_VERSION),
      );
      return new OpenTelemetryInstrumentation({ api, tracer, instruments, account });
    },
  };
}
