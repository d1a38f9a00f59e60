import type { PackageLogger } from '../../common/package-logger.js';

/** Refusals of one status logged one by one in each window; past that they are only counted. */
export const REFUSALS_LOGGED_PER_WINDOW = 10;
export const REFUSAL_LOG_WINDOW_MS = 60_000;

/**
 * Logs each refused notification once, at WARN, so that an operator sees a wrong secret or a malformed body at once
 * rather than from the service's alert e-mail: the status, the client address and the reason (which check failed,
 * which fields), after the account and the route, so that an app with several accounts shows whose notifications are
 * refused. Never a secret nor the body. A flood cannot fill the logs: per status, the first
 * `REFUSALS_LOGGED_PER_WINDOW` refusals of each minute are logged, the others counted and summed up in one line when
 * the minute ends.
 */
export class NotificationRefusalLog {
  readonly #logged = new Map<number, number>();
  readonly #suppressed = new Map<number, number>();
  #windowStart = Number.NEGATIVE_INFINITY;
  #summary: NodeJS.Timeout | undefined;

  /**
   * @param where The account and the route, as `account eu, /eu/notifications`: the registration's own name and its
   * configured path, never the request's.
   */
  constructor(
    private readonly logger: PackageLogger,
    private readonly where: string,
    private readonly now: () => number = Date.now,
  ) {}

  refused(status: number, ip: string | undefined, reason: string): void {
    const now = this.now();
    if (now - this.#windowStart >= REFUSAL_LOG_WINDOW_MS) {
      this.#summarise();
      this.#logged.clear();
      this.#windowStart = now;
    }
    const logged = this.#logged.get(status) ?? 0;
    if (logged < REFUSALS_LOGGED_PER_WINDOW) {
      this.#logged.set(status, logged + 1);
      this.logger.warn(`Notification refused with ${status} from ${address(ip)} (${this.where}): ${reason}`);
      return;
    }
    this.#suppressed.set(status, (this.#suppressed.get(status) ?? 0) + 1);
    this.#summary ??= setTimeout(() => this.#summarise(), this.#windowStart + REFUSAL_LOG_WINDOW_MS - now).unref();
  }

  /** Logs what is still counted; called when the app shuts down too. */
  close(): void {
    this.#summarise();
  }

  #summarise(): void {
    clearTimeout(this.#summary);
    this.#summary = undefined;
    if (this.#suppressed.size === 0) return;
    const counts = [...this.#suppressed].map(([status, count]) => `${count} with ${status}`);
    this.#suppressed.clear();
    this.logger.warn(
      `Notification refusals not logged one by one in the last ${REFUSAL_LOG_WINDOW_MS / 1000} s (${this.where}): ` +
        counts.join(', '),
    );
  }
}

/** The client address, which a misconfigured trust proxy may take from a header: printed only when it is one. */
function address(ip: string | undefined): string {
  return ip !== undefined && /^[\d.:a-fA-F]{2,45}$/.test(ip) ? ip : 'an unknown address';
}
