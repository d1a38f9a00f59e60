import { PayoutsAccessTokenError } from '../errors/payouts-access-token.error.js';
import type { PayoutsConfig } from '../payouts-config.js';
import type { AttemptDeadline } from './attempt-deadline.js';
import { isHeaderSafeCredential } from './header-safe-credential.js';

/**
 * Supplies the bearer token. A function source is called on first use and cached; after a 401
 * the token is fetched again once, and concurrent callers share that one fetch. Waiting for the function counts
 * against the attempt's deadline; a call still running when a waiter's deadline passes is abandoned, so the next
 * payout calls the function afresh instead of waiting on a token endpoint that hangs.
 */
export class AccessTokenProvider {
  private cached: string | undefined;
  private pending: Promise<{ token: string } | { problem: string }> | undefined;

  constructor(private readonly source: PayoutsConfig['accessToken']) {}

  /** Only a function can yield a different token after a 401. */
  get refreshable(): boolean {
    return typeof this.source === 'function';
  }

  async current(requestId: string, deadline: AttemptDeadline): Promise<string> {
    if (typeof this.source !== 'function') {
      return this.source.reveal();
    }
    return this.cached ?? this.fetch(requestId, deadline);
  }

  /** A token to replace `rejected`: a fresh one, unless another caller has replaced it already. */
  async refreshed(rejected: string, requestId: string, deadline: AttemptDeadline): Promise<string> {
    if (this.cached !== undefined && this.cached !== rejected) {
      return this.cached;
    }
    this.cached = undefined;
    return this.fetch(requestId, deadline);
  }

  private async fetch(requestId: string, deadline: AttemptDeadline): Promise<string> {
    const pending = (this.pending ??= this.fetchFromSource());
    const forget = () => {
      if (this.pending === pending) this.pending = undefined;
    };
    const outcome = await deadline
      .race(pending, () => {
        forget();
        return new PayoutsAccessTokenError(requestId, `did not return a token within ${deadline.timeoutMs} ms`);
      })
      .finally(forget);
    if ('problem' in outcome) {
      throw new PayoutsAccessTokenError(requestId, outcome.problem);
    }
    return outcome.token;
  }

  private async fetchFromSource(): Promise<{ token: string } | { problem: string }> {
    const source = this.source as () => string | Promise<string>;
    let token: unknown;
    try {
      token = await source();
    } catch (error) {
      return { problem: `threw ${error instanceof Error ? error.name : typeof error}` };
    }
    if (!isHeaderSafeCredential(token)) {
      return { problem: 'returned no usable token (expected a non-empty string of printable characters, no spaces)' };
    }
    this.cached = token;
    return { token };
  }
}
