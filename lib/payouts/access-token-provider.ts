import { PayoutsAbortedError } from '../errors/payouts-aborted.error.js';
import { PayoutsAccessTokenError } from '../errors/payouts-access-token.error.js';
import type { PayoutsCallTarget } from '../errors/payouts-call-target.js';
import type { AttemptDeadline } from './attempt-deadline.js';
import type { PayoutsClientConfig } from './payouts-client-config.js';
import { isHeaderSafeCredential } from './header-safe-credential.js';

/** The call a token is wanted for, as its errors name it. */
export interface TokenRequester {
  readonly requestId: string | undefined;
  readonly target: PayoutsCallTarget;
}

/** How the last call of the access-token function ended, for health checks: never the token or the error itself. */
export interface AccessTokenFetchOutcome {
  readonly ok: boolean;
  readonly at: Date;
  /** Why it gave no token, in the words of `PayoutsAccessTokenError`. */
  readonly problem?: string;
}

/**
 * Supplies the bearer token. A function source is called on first use and cached; after a 401
 * the token is fetched again once, and concurrent callers share that one fetch. Waiting for the function counts
 * against the attempt's deadline; a call still running when a waiter's deadline passes is abandoned, so the next
 * payout calls the function afresh instead of waiting on a token endpoint that hangs.
 */
export class AccessTokenProvider {
  private cached: string | undefined;
  private pending: Promise<{ token: string } | { problem: string }> | undefined;
  #lastFetch: AccessTokenFetchOutcome | undefined;

  constructor(private readonly source: PayoutsClientConfig['accessToken']) {}

  /** Only a function can yield a different token after a 401. */
  get refreshable(): boolean {
    return typeof this.source === 'function';
  }

  /** How the last call of the token function ended; `undefined` before the first, or with a fixed token. */
  get lastFetch(): AccessTokenFetchOutcome | undefined {
    return this.#lastFetch;
  }

  /** The fixed token, or undefined when a function supplies them. */
  get fixed(): string | undefined {
    return typeof this.source === 'function' ? undefined : this.source.reveal();
  }

  async current(requester: TokenRequester, deadline: AttemptDeadline): Promise<string> {
    if (typeof this.source !== 'function') {
      return this.source.reveal();
    }
    return this.cached ?? this.fetch(requester, deadline);
  }

  /** A token to replace `rejected`: a fresh one, unless another caller has replaced it already. */
  async refreshed(rejected: string, requester: TokenRequester, deadline: AttemptDeadline): Promise<string> {
    if (this.cached !== undefined && this.cached !== rejected) {
      return this.cached;
    }
    this.cached = undefined;
    return this.fetch(requester, deadline);
  }

  private async fetch({ requestId, target }: TokenRequester, deadline: AttemptDeadline): Promise<string> {
    const pending = (this.pending ??= this.fetchFromSource());
    const outcome = await deadline
      .race(pending, () =>
        deadline.timedOut
          ? new PayoutsAccessTokenError(requestId, `did not return a token within ${deadline.timeoutMs} ms`, target)
          : new PayoutsAbortedError(requestId, target),
      )
      .finally(() => {
        // Settled or given up on: either way the next caller starts afresh.
        if (this.pending === pending) this.pending = undefined;
      });
    if ('problem' in outcome) {
      throw new PayoutsAccessTokenError(requestId, outcome.problem, target);
    }
    return outcome.token;
  }

  private async fetchFromSource(): Promise<{ token: string } | { problem: string }> {
    const outcome = await this.callSource();
    this.#lastFetch =
      'problem' in outcome ? { ok: false, at: new Date(), problem: outcome.problem } : { ok: true, at: new Date() };
    return outcome;
  }

  private async callSource(): Promise<{ token: string } | { problem: string }> {
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
