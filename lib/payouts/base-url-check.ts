import type { PayoutsClientConfig } from './payouts-client-config.js';
import type { PackageLogger } from '../common/package-logger.js';

/**
 * `baseUrl` is the API's root: payouts go to `{baseUrl}/payouts`. One that already ends in `/payouts` is almost
 * always the endpoint pasted by mistake, which posts to `…/payouts/payouts`. It is only warned of, not refused:
 * an API mounted below a `/payouts` prefix is legitimate, and the path in every `PayoutsApiError` shows the address.
 */
export function warnOfDoubledPayoutsPath(config: PayoutsClientConfig, logger: PackageLogger): void {
  if (!/\/payouts$/i.test(new URL(config.baseUrl).pathname)) return;
  logger.warn(
    `baseUrl ends in /payouts, so payouts are sent to ${new URL(config.payoutsUrl).pathname}: ` +
      'baseUrl is the API root, without /payouts, unless your API really is mounted there.',
  );
}
