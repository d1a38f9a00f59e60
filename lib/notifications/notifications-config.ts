import { BlockList, isIP } from 'node:net';
import { PayoutsConfigError } from '../errors/payouts-config.error.js';
import { isHttpHeaderName } from '../common/http-header-name.js';
import { optionKeys, rejectUnknownKeys } from '../common/known-option-keys.js';
import { RedactedSecret } from '../common/redacted-secret.js';
import { wholeNumberOption } from '../common/whole-number-option.js';
import { timerDelayOption } from '../common/timer-delay.js';
import type { NotificationDedupeStore } from '../interfaces/notification-dedupe-store.interface.js';
import type { NotificationDispatcherFactory } from '../interfaces/notification-dispatcher.interface.js';
import type {
  NotificationDedupeOptions,
  NotificationRequestInfo,
  NotificationSecretEntry,
  NotificationsOptions,
  NotificationVerificationOptions,
} from '../interfaces/notifications-options.interface.js';

/** One accepted secret: its value, the label it is logged by, and when it stops being accepted. */
export interface NotificationSecretValue {
  readonly value: RedactedSecret;
  /** `undefined` for a secret given as a single string. */
  readonly label: string | undefined;
  /** Milliseconds since the epoch past which it is refused; `undefined` for never. */
  readonly notAfter: number | undefined;
}

/** Where the shared secret travels: a query parameter of the notification URL, or a header. */
export interface NotificationSecretConfig {
  /** One entry, or several while the secret is rotated. */
  readonly values: readonly NotificationSecretValue[];
  readonly in: 'query' | 'header';
  /** Parameter name, or lower-cased header name. */
  readonly name: string;
}

export interface NotificationVerificationConfig {
  readonly secret?: NotificationSecretConfig;
  readonly allowedIps?: BlockList;
  readonly verify?: (request: NotificationRequestInfo) => boolean | Promise<boolean>;
}

/** Either the user's own store, or the bounds of the built-in in-memory store. */
export type NotificationDedupeConfig =
  | { readonly store: NotificationDedupeStore }
  | { readonly store?: undefined; readonly ttlMs: number; readonly maxEntries: number };

/** The notification options after validation, with every default filled in. */
export interface NotificationsConfig {
  readonly path: string;
  /** `false` for an instance whose dispatcher takes no notifications over HTTP (a queue worker): no route. */
  readonly route: boolean;
  /** Unused without a route, the one thing it guards. */
  readonly verification: NotificationVerificationConfig | 'none';
  readonly bodyLimitBytes: number;
  readonly handlerTimeoutMs: number;
  readonly dedupe: NotificationDedupeConfig;
  readonly controllerDecorators: readonly ClassDecorator[];
  /** The factory of the dispatcher that replaces the inline one, such as `payoutsQueue()`. */
  readonly dispatcher: NotificationDispatcherFactory | undefined;
}

const NOTIFICATIONS_OPTION_KEYS = optionKeys<NotificationsOptions>()(
  'path',
  'verification',
  'bodyLimitBytes',
  'handlerTimeoutMs',
  'dedupe',
  'controllerDecorators',
  'dispatcher',
);
const VERIFICATION_OPTION_KEYS = optionKeys<NotificationVerificationOptions>()('secret', 'allowedIps', 'verify');
const SECRET_OPTION_KEYS = optionKeys<NonNullable<NotificationVerificationOptions['secret']>>()(
  'value',
  'queryParam',
  'header',
);
const SECRET_ENTRY_KEYS = optionKeys<NotificationSecretEntry>()('value', 'label', 'notAfter');
const DEDUPE_OPTION_KEYS = optionKeys<NotificationDedupeOptions>()('store', 'ttlMs', 'maxEntries');

const VERIFICATION_EXAMPLE =
  'notifications: { verification: { secret: { value: process.env.PAYOUTS_NOTIFICATIONS_SECRET } } } ' +
  "(or allowedIps, verify, or 'none'), or notifications: false for an app that receives no notifications";

/**
 * Notifications are on unless `false`: the service sends them to a URL the merchant configures, and a route that
 * anyone could call must prove the sender, hence the mandatory `verification`.
 */
export function resolveNotificationsConfig(
  options: NotificationsOptions | false | undefined,
): NotificationsConfig | false {
  if (options === false) return false;
  if (options === undefined || options === null) {
    throw new PayoutsConfigError('notifications.verification', VERIFICATION_EXAMPLE);
  }
  if (typeof options !== 'object') {
    throw new PayoutsConfigError('notifications', `an object such as ${VERIFICATION_EXAMPLE}`);
  }
  rejectUnknownKeys(options, NOTIFICATIONS_OPTION_KEYS, 'notifications');
  const dispatcher = resolveDispatcher(options.dispatcher);
  const route = dispatcher?.route !== false;
  if (dispatcher && options.dedupe !== undefined) {
    throw new PayoutsConfigError(
      'notifications.dedupe',
      'no dedupe options beside a dispatcher: they configure the inline dispatcher, and a dispatcher such as ' +
        'payoutsQueue() recognises re-sends on its own',
    );
  }
  return {
    path: resolvePath(options.path),
    route,
    verification: resolveVerification(options.verification),
    bodyLimitBytes: wholeNumberOption('notifications.bodyLimitBytes', options.bodyLimitBytes, 65_536, 1, 'bytes'),
    handlerTimeoutMs: resolveHandlerTimeout(options.handlerTimeoutMs),
    dedupe: resolveDedupe(options.dedupe),
    controllerDecorators: resolveControllerDecorators(options.controllerDecorators),
    dispatcher,
  };
}

function resolveDispatcher(dispatcher: unknown): NotificationDispatcherFactory | undefined {
  if (dispatcher === undefined) return undefined;
  const factory = dispatcher as Partial<NotificationDispatcherFactory> | null;
  if (
    factory === null ||
    typeof factory !== 'object' ||
    typeof factory.create !== 'function' ||
    (factory.route !== undefined && typeof factory.route !== 'boolean') ||
    (factory.runsHandlers !== undefined && typeof factory.runsHandlers !== 'boolean') ||
    (factory.storageOf !== undefined && typeof factory.storageOf !== 'function')
  ) {
    throw new PayoutsConfigError(
      'notifications.dispatcher',
      'a dispatcher factory such as payoutsQueue({ connection }) from nestjs-payouts/queue',
    );
  }
  return factory as NotificationDispatcherFactory;
}

/**
 * Characters that make a route path a pattern on Express or Fastify (parameters `:id`, wildcards `*` and `*splat`,
 * optional groups `{…}`, regular expressions `(…)`), or that no request path can hold literally. A pattern would also
 * take requests meant for another account's route.
 */
const NOT_A_FIXED_PATH = /[?#\s:*{}()[\]+!\\]/;

function resolvePath(path: unknown): string {
  if (path === undefined) return 'payouts/notifications';
  if (typeof path !== 'string' || path.trim() === '' || NOT_A_FIXED_PATH.test(path)) {
    throw new PayoutsConfigError(
      'notifications.path',
      'a fixed route path such as "payouts/notifications", without parameters or wildcards (no :, *, {, }, (, ), [, ], +, !, ?, #, \\ or spaces)',
    );
  }
  return path;
}

function resolveHandlerTimeout(value: unknown): number {
  return timerDelayOption('notifications.handlerTimeoutMs', value, 8_000, 1);
}

function resolveVerification(verification: unknown): NotificationVerificationConfig | 'none' {
  if (verification === 'none') return 'none';
  if (verification === undefined) {
    throw new PayoutsConfigError('notifications.verification', VERIFICATION_EXAMPLE);
  }
  if (verification === null || typeof verification !== 'object') {
    throw new PayoutsConfigError(
      'notifications.verification',
      `an object with secret, allowedIps or verify, or 'none'`,
    );
  }
  rejectUnknownKeys(verification, VERIFICATION_OPTION_KEYS, 'notifications.verification');
  const { secret, allowedIps, verify } = verification as NotificationVerificationOptions;
  if (secret === undefined && allowedIps === undefined && verify === undefined) {
    throw new PayoutsConfigError(
      'notifications.verification',
      `at least one of secret, allowedIps or verify, or 'none'`,
    );
  }
  if (verify !== undefined && typeof verify !== 'function') {
    throw new PayoutsConfigError(
      'notifications.verification.verify',
      'a function returning a boolean or a promise of one',
    );
  }
  return {
    ...(secret !== undefined && { secret: resolveSecret(secret) }),
    ...(allowedIps !== undefined && { allowedIps: resolveAllowedIps(allowedIps) }),
    ...(verify !== undefined && { verify }),
  };
}

function resolveSecret(secret: NotificationVerificationOptions['secret']): NotificationSecretConfig {
  const option = 'notifications.verification.secret';
  if (secret === null || typeof secret !== 'object') {
    throw new PayoutsConfigError(option, '{ value: process.env.PAYOUTS_NOTIFICATIONS_SECRET }');
  }
  rejectUnknownKeys(secret, SECRET_OPTION_KEYS, option);
  const { value, queryParam, header } = secret;
  const values = resolveSecretValues(value, `${option}.value`);
  if (queryParam !== undefined && header !== undefined) {
    throw new PayoutsConfigError(option, 'either queryParam or header, not both');
  }
  if (header !== undefined) {
    if (!isHttpHeaderName(header)) {
      throw new PayoutsConfigError(`${option}.header`, 'an HTTP header name such as "x-notifications-token"');
    }
    return { values, in: 'header', name: header.toLowerCase() };
  }
  if (queryParam !== undefined && (typeof queryParam !== 'string' || queryParam === '')) {
    throw new PayoutsConfigError(`${option}.queryParam`, 'a non-empty query parameter name');
  }
  return { values, in: 'query', name: queryParam ?? 'token' };
}

const SECRET_LIST_EXAMPLE =
  'a non-empty string, or a non-empty array of { value, label, notAfter? } such as ' +
  "[{ value: process.env.PAYOUTS_NOTIFICATIONS_SECRET, label: '2026-11' }, " +
  "{ value: process.env.PAYOUTS_NOTIFICATIONS_SECRET_PREVIOUS, label: '2026-05', notAfter: '2026-12-01T00:00:00Z' }]";

/** A single secret, or the list of secrets accepted while rotating; never echoes a value. */
function resolveSecretValues(value: unknown, option: string): NotificationSecretValue[] {
  if (typeof value === 'string' && value.trim() !== '') {
    return [{ value: new RedactedSecret(value), label: undefined, notAfter: undefined }];
  }
  if (!Array.isArray(value) || value.length === 0) throw new PayoutsConfigError(option, SECRET_LIST_EXAMPLE);
  const labels = new Set<string>();
  return value.map((entry: unknown, index) => {
    const at = `${option}[${index}]`;
    if (entry === null || typeof entry !== 'object') {
      throw new PayoutsConfigError(at, "an object { value, label, notAfter? } such as { value, label: '2026-11' }");
    }
    rejectUnknownKeys(entry, SECRET_ENTRY_KEYS, at);
    const { value: secret, label, notAfter } = entry as Partial<NotificationSecretEntry>;
    if (typeof secret !== 'string' || secret.trim() === '') {
      throw new PayoutsConfigError(`${at}.value`, 'a non-empty string');
    }
    if (typeof label !== 'string' || !/^[\w.:@+-]{1,64}$/.test(label)) {
      throw new PayoutsConfigError(
        `${at}.label`,
        'a name of 1 to 64 letters, digits or . _ - : @ + that the log shows in place of the secret, such as "2026-11"',
      );
    }
    if (labels.has(label)) throw new PayoutsConfigError(`${at}.label`, 'a label no other secret of the list has');
    labels.add(label);
    return { value: new RedactedSecret(secret), label, notAfter: resolveNotAfter(notAfter, `${at}.notAfter`) };
  });
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T[\d:.]+(?:Z|[+-]\d{2}:\d{2})$/i;

/**
 * `Date.parse` rolls a day past the end of its month over into the next (`2026-02-30` is 2 March): a date that does
 * not exist is refused instead, as it is surely a typo and the secret would otherwise expire on a day nobody chose.
 */
function parseExistingDateTime(text: string): number {
  const date = ISO_DATE_TIME.exec(text);
  if (date === null) return Number.NaN;
  const [year, month, day] = date.slice(1, 4).map(Number) as [number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth ? Date.parse(text) : Number.NaN;
}

function resolveNotAfter(notAfter: unknown, option: string): number | undefined {
  if (notAfter === undefined) return undefined;
  const time =
    notAfter instanceof Date
      ? notAfter.getTime()
      : typeof notAfter === 'string'
        ? parseExistingDateTime(notAfter)
        : Number.NaN;
  if (Number.isNaN(time)) {
    throw new PayoutsConfigError(
      option,
      'a Date, or an ISO 8601 date-time string of a day that exists, with its offset, such as "2026-12-01T00:00:00Z"',
    );
  }
  return time;
}

function resolveAllowedIps(allowedIps: unknown): BlockList {
  const option = 'notifications.verification.allowedIps';
  if (!Array.isArray(allowedIps) || allowedIps.length === 0) {
    throw new PayoutsConfigError(option, 'a non-empty array of IP addresses or CIDR ranges');
  }
  const list = new BlockList();
  allowedIps.forEach((entry: unknown, index) => {
    if (!addAllowedIp(list, entry)) {
      throw new PayoutsConfigError(
        `${option}[${index}]`,
        'an IPv4 or IPv6 address or CIDR range, such as "203.0.113.7", "203.0.113.0/24" or "2001:db8::/32"',
      );
    }
  });
  return list;
}

function addAllowedIp(list: BlockList, entry: unknown): boolean {
  if (typeof entry !== 'string') return false;
  const [address = '', prefix, ...rest] = entry.trim().split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) {
    list.addAddress(address, type);
    return true;
  }
  const bits = Number(prefix);
  if (!/^\d{1,3}$/.test(prefix) || bits > (family === 4 ? 32 : 128)) return false;
  list.addSubnet(address, bits, type);
  return true;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function resolveDedupe(dedupe: NotificationDedupeOptions | undefined): NotificationDedupeConfig {
  if (dedupe === undefined) return { ttlMs: DAY_MS, maxEntries: 100_000 };
  if (dedupe === null || typeof dedupe !== 'object') {
    throw new PayoutsConfigError('notifications.dedupe', 'an object with store, or ttlMs and maxEntries');
  }
  rejectUnknownKeys(dedupe, DEDUPE_OPTION_KEYS, 'notifications.dedupe');
  const { store, ttlMs, maxEntries } = dedupe;
  if (store === undefined) {
    return {
      ttlMs: wholeNumberOption('notifications.dedupe.ttlMs', ttlMs, DAY_MS, 1, 'milliseconds'),
      maxEntries: wholeNumberOption('notifications.dedupe.maxEntries', maxEntries, 100_000, 1),
    };
  }
  if (ttlMs !== undefined || maxEntries !== undefined) {
    throw new PayoutsConfigError(
      'notifications.dedupe',
      'either store, or ttlMs and maxEntries for the built-in store (a custom store sets its own bounds)',
    );
  }
  const methods = ['claim', 'complete', 'release'] as const;
  if (store === null || typeof store !== 'object' || !methods.every((name) => typeof store[name] === 'function')) {
    throw new PayoutsConfigError('notifications.dedupe.store', 'an object with claim, complete and release methods');
  }
  return { store };
}

function resolveControllerDecorators(decorators: unknown): readonly ClassDecorator[] {
  if (decorators === undefined) return [];
  if (!Array.isArray(decorators) || !decorators.every((decorator) => typeof decorator === 'function')) {
    throw new PayoutsConfigError(
      'notifications.controllerDecorators',
      'an array of class decorators, such as [Public()]',
    );
  }
  return decorators as ClassDecorator[];
}
