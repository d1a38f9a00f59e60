import { timingSafeEqual } from 'node:crypto';
import { isIP, type BlockList } from 'node:net';
import type { LoggerService } from '@nestjs/common';
import { stackOf } from '../../common/error-stack.js';
import type { NotificationSecretConfig, NotificationVerificationConfig } from '../notifications-config.js';
import type { NotificationRequestInfo } from '../../interfaces/notifications-options.interface.js';

/**
 * `undefined` when the request proves it comes from the payouts service, otherwise why not, for the log: never the
 * value presented, only which check failed.
 */
export type NotificationVerifier = (
  request: NotificationRequestInfo,
) => string | undefined | Promise<string | undefined>;

type Check = (request: NotificationRequestInfo) => string | undefined;

/** Combines the configured checks, cheapest first; all must pass. */
export function createNotificationVerifier(
  config: NotificationVerificationConfig,
  logger: LoggerService,
): NotificationVerifier {
  const checks: Check[] = [];
  if (config.allowedIps) checks.push(ipCheck(config.allowedIps));
  if (config.secret) checks.push(secretCheck(config.secret));
  const { verify } = config;
  return (request) => {
    for (const check of checks) {
      const failure = check(request);
      if (failure !== undefined) return failure;
    }
    return verify ? runVerify(verify, request, logger) : undefined;
  };
}

function ipCheck(allowed: BlockList): Check {
  return ({ ip }) => {
    const family = ip === undefined ? 0 : isIP(ip);
    // BlockList matches IPv4-mapped IPv6 addresses (`::ffff:203.0.113.7`) against IPv4 rules itself.
    return family !== 0 && allowed.check(ip!, family === 4 ? 'ipv4' : 'ipv6')
      ? undefined
      : 'the client address is not in allowedIps';
  };
}

/**
 * Compared in constant time: `timingSafeEqual` always runs over the secret's own bytes, against a presented value of
 * another length too (compared with the secret itself, then refused), so the time taken reveals neither the secret
 * nor its length. The presented value is encoded into a buffer kept for the purpose, at most a few bytes past the
 * secret's length, so neither its own length nor the request allocates anything.
 */
function secretCheck(secret: NotificationSecretConfig): Check {
  const expected = Buffer.from(secret.value.reveal());
  // Four bytes more than the secret (the longest UTF-8 character): a longer value fills it past the secret's length.
  const presented = Buffer.alloc(expected.length + 4);
  const presentedPrefix = presented.subarray(0, expected.length);
  const { name } = secret;
  const where = secret.in === 'header' ? `header ${name}` : `query parameter ${name}`;
  const missing = `the secret is missing (${where})`;
  const wrong = `the secret does not match (${where})`;
  const read =
    secret.in === 'header'
      ? (request: NotificationRequestInfo) => request.headers[name]
      : (request: NotificationRequestInfo) => request.query[name];
  return (request) => {
    const provided = read(request);
    if (provided === undefined) return missing;
    if (typeof provided !== 'string') return wrong;
    const sameLength = presented.write(provided) === expected.length;
    return timingSafeEqual(sameLength ? presentedPrefix : expected, expected) && sameLength ? undefined : wrong;
  };
}

const VERIFY_DENIED = 'verify returned false';
const VERIFY_FAILED = 'verify threw or rejected (logged above)';

/** A `verify` that throws or rejects denies the request; the error is logged for the developer. */
function runVerify(
  verify: NonNullable<NotificationVerificationConfig['verify']>,
  request: NotificationRequestInfo,
  logger: LoggerService,
): string | undefined | Promise<string | undefined> {
  const fail = (error: unknown) => {
    logger.error('The notifications verify function failed; the request is refused', stackOf(error));
    return VERIFY_FAILED;
  };
  const verdictOf = (verified: unknown) => (verified === true ? undefined : VERIFY_DENIED);
  try {
    const verdict = verify(request);
    if (typeof verdict === 'boolean') return verdictOf(verdict);
    return Promise.resolve(verdict).then(verdictOf, fail);
  } catch (error) {
    return fail(error);
  }
}
