import { timingSafeEqual } from 'node:crypto';
import { isIP, type BlockList } from 'node:net';
import { printable } from '../../common/printable.js';
import type { NotificationSecretConfig, NotificationVerificationConfig } from '../notifications-config.js';
import type { NotificationRequestInfo } from '../../interfaces/notifications-options.interface.js';
import type { PackageLogger } from '../../common/package-logger.js';

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
  logger: PackageLogger,
  now: () => number = Date.now,
): NotificationVerifier {
  const checks: Check[] = [];
  if (config.allowedIps) checks.push(ipCheck(config.allowedIps));
  if (config.secret) checks.push(secretCheck(config.secret, logger, now));
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

/** Below this many bytes a secret can be guessed or brute-forced too easily: the bootstrap warns. */
export const MIN_SECRET_BYTES = 16;
/** At most one line per secret label and hour says that it verified requests (see `secretCheck`). */
export const SECRET_USE_LOG_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Compared in constant time, against every configured secret, expired ones included, without stopping at a match:
 * `timingSafeEqual` always runs over each secret's own bytes, against a presented value of another length too
 * (compared with the secret itself, then refused), so the time taken reveals neither a secret, nor its length, nor
 * which one matched. The presented value is encoded once into a buffer kept for the purpose, at most a few bytes past
 * the longest secret, so neither its own length nor the request allocates anything.
 *
 * With several secrets (a rotation), a secret past its `notAfter` is refused unless another entry of the list holds the
 * same value and is still valid (the first valid entry verifies it), and the label of the one that verified
 * a request is logged (never a value): at LOG, the first time after boot, then at most once an hour with the count
 * since, so that an operator sees when the old secret goes quiet without a line per notification.
 */
function secretCheck(secret: NotificationSecretConfig, logger: PackageLogger, now: () => number): Check {
  warnAtBoot(secret, logger, now());
  const expected = secret.values.map(({ value }) => Buffer.from(value.reveal()));
  // Four bytes more than the longest secret (the longest UTF-8 character): a longer value fills it past every length.
  const presented = Buffer.alloc(Math.max(...expected.map((bytes) => bytes.length)) + 4);
  const secrets = secret.values.map(({ label, notAfter }, index) => ({
    expected: expected[index]!,
    // The part of the presented value compared with this secret, when the lengths agree.
    presentedPrefix: presented.subarray(0, expected[index]!.length),
    label,
    notAfter: notAfter ?? Number.POSITIVE_INFINITY,
    lastLogged: Number.NEGATIVE_INFINITY,
    unlogged: 0,
  }));
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
    const written = presented.write(provided);
    let matched: (typeof secrets)[number] | undefined;
    let expired: (typeof secrets)[number] | undefined;
    let time = Number.NaN;
    for (const candidate of secrets) {
      const sameLength = written === candidate.expected.length;
      const equal = timingSafeEqual(sameLength ? candidate.presentedPrefix : candidate.expected, candidate.expected);
      if (!equal || !sameLength || matched !== undefined) continue;
      // The same value may be listed twice (with and without a notAfter): any entry still valid verifies it.
      if (candidate.notAfter !== Number.POSITIVE_INFINITY && Number.isNaN(time)) time = now();
      if (time > candidate.notAfter) expired ??= candidate;
      else matched = candidate;
    }
    if (matched === undefined) {
      if (expired === undefined) return wrong;
      return `the secret ${printable(expired.label!)} expired at ${new Date(expired.notAfter).toISOString()} (${where})`;
    }
    if (matched.label === undefined) return undefined;
    if (Number.isNaN(time)) time = now();
    matched.unlogged += 1;
    if (time - matched.lastLogged >= SECRET_USE_LOG_INTERVAL_MS) {
      const count =
        matched.lastLogged === Number.NEGATIVE_INFINITY
          ? 'the first since the app started'
          : `${matched.unlogged} since ${new Date(matched.lastLogged).toISOString()}`;
      logger.log(`Notifications verified with the secret ${printable(matched.label)} (${where}): ${count}`);
      matched.lastLogged = time;
      matched.unlogged = 0;
    }
    return undefined;
  };
}

/** Warns about secrets that are expired already, or short enough to guess; names them by label, never by value. */
function warnAtBoot(secret: NotificationSecretConfig, logger: PackageLogger, now: number): void {
  const option = 'notifications.verification.secret.value';
  for (const { value, label, notAfter } of secret.values) {
    const named = label === undefined ? option : `${option} ${printable(label)}`;
    if (notAfter !== undefined && notAfter < now) {
      const validTwin = secret.values.find(
        (other) => other.value.reveal() === value.reveal() && (other.notAfter === undefined || other.notAfter >= now),
      );
      const outcome = validTwin
        ? `its value is listed again as ${printable(validTwin.label!)}, which verifies it`
        : 'requests presenting it are refused with 401';
      logger.warn(`${named} expired at ${new Date(notAfter).toISOString()}: ${outcome}. Remove it from the list.`);
    }
    if (Buffer.byteLength(value.reveal()) < MIN_SECRET_BYTES) {
      logger.warn(
        `${named} is shorter than ${MIN_SECRET_BYTES} bytes, short enough to guess: ` +
          'use a random secret of 32 bytes or more, such as the output of `openssl rand -hex 32`.',
      );
    }
  }
}

const VERIFY_DENIED = 'verify returned false';
const VERIFY_FAILED = 'verify threw or rejected (logged above)';

/** A `verify` that throws or rejects denies the request; the error is logged for the developer. */
function runVerify(
  verify: NonNullable<NotificationVerificationConfig['verify']>,
  request: NotificationRequestInfo,
  logger: PackageLogger,
): string | undefined | Promise<string | undefined> {
  const fail = (error: unknown) => {
    logger.error('The notifications verify function failed; the request is refused', error);
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
