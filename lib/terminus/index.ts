export { PayoutsHealthIndicator, type PayoutsComponentHealth } from './payouts-health-indicator.js';
export type { PayoutsHealthCheckOptions, PayoutsHealthThresholds } from './payouts-health-options.js';
