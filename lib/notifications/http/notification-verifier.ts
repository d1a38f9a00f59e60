import { hash, timingSafeEqual } from 'node:crypto';
import { isIP, type BlockList } from 'node:net';
import type { LoggerService } from '@nestjs/common';
import { stackOf } from '../../common/error-stack.js';
import type { NotificationSecretConfig, NotificationVerificationConfig } from '../notifications-config.js';
import type { NotificationRequestInfo } from '../../interfaces/notifications-options.interface.js';

/** `true` when the request proves it comes from the payouts service. */
export type NotificationVerifier = (request: NotificationRequestInfo) => boolean | Promise<boolean>;

/** Combines the configured checks, cheapest first; all must pass. */
export function createNotificationVerifier(config: NotificationVerificationConfig, logger: LoggerService): NotificationVerifier {
  const checks: ((request: NotificationRequestInfo) => boolean)[] = [];
  if (config.allowedIps) checks.push(ipCheck(config.allowedIps));
  if (config.secret) checks.push(secretCheck(config.secret));
  const { verify } = config;
  return (request) => {
    for (const check of checks) {
      if (!check(request)) return false;
    }
    return verify ? runVerify(verify, request, logger) : true;
  };
}

function ipCheck(allowed: BlockList): (request: NotificationRequestInfo) => boolean {
  return ({ ip }) => {
    const family = ip === undefined ? 0 : isIP(ip);
    // BlockList matches IPv4-mapped IPv6 addresses (`::ffff:203.0.113.7`) against IPv4 rules itself.
    return family !== 0 && allowed.check(ip!, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * Both sides are hashed first so that `timingSafeEqual` compares equal lengths:
 * the time taken reveals neither the secret nor its length.
 */
function secretCheck(secret: NotificationSecretConfig): (request: NotificationRequestInfo) => boolean {
  const expected = sha256(secret.value.reveal());
  const { name } = secret;
  const read =
    secret.in === 'header'
      ? (request: NotificationRequestInfo) => request.headers[name]
      : (request: NotificationRequestInfo) => request.query[name];
  return (request) => {
    const provided = read(request);
    return typeof provided === 'string' && timingSafeEqual(sha256(provided), expected);
  };
}

/** The one-shot `hash` skips the `Hash` object that `createHash` builds, which matters once per request. */
function sha256(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/** A `verify` that throws or rejects denies the request; the error is logged for the developer. */
function runVerify(
  verify: NonNullable<NotificationVerificationConfig['verify']>,
  request: NotificationRequestInfo,
  logger: LoggerService,
): boolean | Promise<boolean> {
  const fail = (error: unknown) => {
    logger.error('The notifications verify function failed; the request is refused', stackOf(error));
    return false;
  };
  try {
    const verdict = verify(request);
    if (typeof verdict === 'boolean') return verdict;
    return Promise.resolve(verdict).then((result) => result === true, fail);
  } catch (error) {
    return fail(error);
  }
}
