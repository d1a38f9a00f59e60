/** The options exactly as the user passed them to `forRoot` / returned from `forRootAsync`. */
export { MODULE_OPTIONS_TOKEN as PAYOUTS_MODULE_OPTIONS } from './payouts.module-definition.js';

/** The validated, normalised configuration every provider of the module reads. */
export const PAYOUTS_CONFIG = Symbol('PAYOUTS_CONFIG');
