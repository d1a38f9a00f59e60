import { performance } from 'node:perf_hooks';
import { Inject, Injectable, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { printable } from '../common/printable.js';
import { SharedCheck } from '../common/shared-check.js';
import {
  DEFAULT_PAYOUTS_ACCOUNT,
  getPayoutsHealthSourceToken,
  getPayoutsServiceToken,
  type PayoutsHealthComponent,
  type PayoutsHealthSource,
  type PayoutsQueueFigures,
  PayoutsService,
} from '../index.js';
import {
  type PayoutsHealthCheckConfig,
  type PayoutsHealthCheckOptions,
  type PayoutsHealthThresholds,
  resolvePayoutsHealthOptions,
} from './payouts-health-options.js';
import { terminus } from './terminus-runtime.js';

/** What a health check reports of one part: its latency and figures, or why it is down. Never a connection detail. */
export type PayoutsComponentHealth =
  ({ status: 'up'; latencyMs: number } & Partial<PayoutsQueueFigures>) | { status: 'down'; problem: string };

const COMPONENTS: readonly PayoutsHealthComponent[] = [
  'dedupe-store',
  'notifications-queue',
  'payout-runs',
  'payout-ledger',
];

/** Which threshold applies to which figure of which part. */
const LIMITS: readonly [PayoutsHealthComponent, keyof PayoutsQueueFigures, keyof PayoutsHealthThresholds][] = [
  ['notifications-queue', 'backlog', 'notificationsBacklog'],
  ['notifications-queue', 'failed', 'notificationsFailed'],
  ['payout-runs', 'backlog', 'payoutsBacklog'],
  ['payout-runs', 'failed', 'payoutsFailed'],
  ['payout-runs', 'parked', 'payoutsParked'],
];

/**
 * Health checks of an account for `@nestjs/terminus`: provide it beside `TerminusModule` and call it from a
 * `@HealthCheck()` route. `check()` is a readiness check (Redis, backlogs, workers, the access token); `workers()` a
 * liveness check of this instance alone.
 */
@Injectable()
export class PayoutsHealthIndicator {
  constructor(
    @Inject(terminus.HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * Readiness: each Redis connection of the account (dedupe store, notification queue, payout runs) answers a `PING`
   * within `timeoutMs`, no figure is past its threshold, the workers run and are not paused, and the last
   * access-token fetch succeeded. A rate-limit pause is reported, and is not `down`.
   */
  async check(key = 'payouts', options?: PayoutsHealthCheckOptions): Promise<HealthIndicatorResult> {
    const config = resolvePayoutsHealthOptions(options);
    const account = config.account ?? DEFAULT_PAYOUTS_ACCOUNT;
    const problems: string[] = [];
    const parts: Partial<Record<PayoutsHealthComponent, PayoutsComponentHealth>> = {};
    await Promise.all(
      COMPONENTS.map(async (component) => {
        const source = this.find<PayoutsHealthSource>(getPayoutsHealthSourceToken(component, account));
        if (!source) return;
        const health = await probe(source, config.timeoutMs);
        parts[component] = health;
        problems.push(...problemsOf(component, health, config));
      }),
    );
    const service = this.find<PayoutsService>(getPayoutsServiceToken(account));
    // A mistyped account must not pass for a healthy one with nothing to check.
    if (!(service instanceof PayoutsService)) {
      problems.push(`account: the app has no PayoutsModule registration named '${printable(account)}'`);
    }
    const lastFetch = service instanceof PayoutsService ? service.lastAccessTokenFetch : undefined;
    const accessToken = lastFetch && {
      lastFetch: lastFetch.ok ? 'ok' : 'failed',
      at: lastFetch.at.toISOString(),
      ...(lastFetch.problem !== undefined && { problem: lastFetch.problem }),
    };
    if (lastFetch && !lastFetch.ok) problems.push(`access token: the last fetch failed (${lastFetch.problem})`);
    const data = {
      account,
      ...parts,
      ...(accessToken && { accessToken }),
      ...(problems.length > 0 && { problems: problems.sort() }),
    };
    const session = this.indicators.check(key);
    return problems.length > 0 ? session.down(data) : session.up(data);
  }

  /**
   * Liveness: this instance's workers (notification queue, payout runs) are running. Asks nothing of Redis, so that a
   * Redis outage takes instances out of service (readiness) without restarting them all.
   */
  async workers(
    key = 'payouts-workers',
    options?: Pick<PayoutsHealthCheckOptions, 'account'>,
  ): Promise<HealthIndicatorResult> {
    const { account = DEFAULT_PAYOUTS_ACCOUNT } = resolvePayoutsHealthOptions(options);
    const stopped: string[] = [];
    if (!(this.find<PayoutsService>(getPayoutsServiceToken(account)) instanceof PayoutsService)) {
      stopped.push(`account: the app has no PayoutsModule registration named '${printable(account)}'`);
    }
    const data: Record<string, unknown> = { account };
    for (const component of COMPONENTS) {
      const worker = this.find<PayoutsHealthSource>(getPayoutsHealthSourceToken(component, account))?.worker?.();
      if (worker === undefined) continue;
      data[component] = worker;
      if (!worker.running) stopped.push(`${component}: the worker is not running`);
    }
    const session = this.indicators.check(key);
    return stopped.length > 0 ? session.down({ ...data, problems: stopped }) : session.up(data);
  }

  /** A provider of the app by token, wherever it is registered; `undefined` when there is none. */
  private find<T>(token: string | Type<unknown>): T | undefined {
    try {
      return (this.moduleRef.get(token, { strict: false }) as T | null) ?? undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * `PING`, then the figures: one check per part in flight, whose answer every probe that comes meanwhile shares, so
 * that probes while Redis hangs add no command to its connection's queue. Shared by every indicator of the process,
 * as a part's connection is.
 */
const partChecks = new SharedCheck<PayoutsHealthSource, { latencyMs: number } & Partial<PayoutsQueueFigures>>(
  async (source) => {
    const started = performance.now();
    await source.ping();
    const figures = source.figures ? await source.figures() : {};
    return { latencyMs: Math.round(performance.now() - started), ...figures };
  },
);

/** The part's check, or the one in flight, within `timeoutMs`. */
async function probe(source: PayoutsHealthSource, timeoutMs: number): Promise<PayoutsComponentHealth> {
  try {
    const health = await partChecks.run(
      source,
      timeoutMs,
      () => new Error(`no reply from Redis within ${timeoutMs} ms`),
    );
    return { status: 'up', ...health };
  } catch (error) {
    return { status: 'down', problem: problemOf(error) };
  }
}

/** What went wrong, without a message that could carry an address or a credential from a client library. */
function problemOf(error: unknown): string {
  if (error instanceof Error && error.message.startsWith('no reply from Redis within')) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  const name = error instanceof Error ? error.name : typeof error;
  return `Redis failed: ${printable(typeof code === 'string' ? code : name)}`;
}

function problemsOf(
  component: PayoutsHealthComponent,
  health: PayoutsComponentHealth,
  { thresholds }: PayoutsHealthCheckConfig,
): string[] {
  if (health.status === 'down') return [`${component}: ${health.problem}`];
  const problems: string[] = [];
  for (const [part, figure, threshold] of LIMITS) {
    const limit = thresholds[threshold];
    const value = health[figure];
    if (part === component && limit !== undefined && typeof value === 'number' && value > limit) {
      problems.push(`${component}: ${figure} ${value} is above ${threshold} (${limit})`);
    }
  }
  if (health.paused) problems.push(`${component}: the queue is paused`);
  if (health.worker && !health.worker.running) problems.push(`${component}: the worker is not running`);
  if (health.worker?.paused) problems.push(`${component}: the worker is paused`);
  return problems;
}
