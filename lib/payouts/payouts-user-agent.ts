import { createRequire } from 'node:module';

// This file sits two folders below the package root both as source (lib/payouts) and built (dist/payouts).
const { name, version } = createRequire(import.meta.url)('../../package.json') as { name: string; version: string };

/** Names the package and its version to the payouts API. */
export const PAYOUTS_USER_AGENT = `${name}/${version}`;
