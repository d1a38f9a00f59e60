import { PayoutsAccessTokenError } from '../errors/payouts-access-token.error.js';
import type { PayoutsClientConfig } from './payouts-client-config.js';
import { isHeaderSafeCredential } from './header-safe-credential.js';

/**
 * Supplies the bearer token. A function source is called on first use and cached; after a 401
 * the token is fetched again once, and concurrent callers share that one fetch.
 */
export class AccessTokenProvider {
  private cached: string | undefined;
  private pending: Promise<{ token: string } | { problem: string }> | undefined;

  constructor(private readonly source: PayoutsClientConfig['accessToken']) {}

  /** Only a function can yield a different token after a 401. */
  get refreshable(): boolean {
    return typeof this.source === 'function';
  }

  async current(requestId: string): Promise<string> {
    if (typeof this.source !== 'function') {
      return this.source.reveal();
    }
    return this.cached ?? this.fetch(requestId);
  }

  /** Replaces the `rejected` token with a fresh one, unless another caller has replaced it already. */
  async refresh(rejected: string, requestId: string): Promise<void> {
    if (this.cached !== undefined && this.cached !== rejected) {
      return;
    }
    this.cached = undefined;
    await this.fetch(requestId);
  }

  private async fetch(requestId: string): Promise<string> {
    this.pending ??= this.fetchFromSource().finally(() => {
      this.pending = undefined;
    });
    const outcome = await this.pending;
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
