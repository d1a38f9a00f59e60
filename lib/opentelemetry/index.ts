export { payoutsOpenTelemetry, type PayoutsOpenTelemetryOptions } from './payouts-open-telemetry.js';
