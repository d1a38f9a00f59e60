import type { Queue } from 'bullmq';
import type {
  PayoutCountedState,
  PayoutLedger,
  PayoutLedgerClaim,
  PayoutLedgerDecision,
  PayoutLedgerRecord,
} from '../index.js';
import { payoutKey } from './payout-job.js';
import { BEGIN, CLAIM, DECISIONS_AWAITING_JOBS, PAUSE, RESOLVE, SETTLE } from './run-scripts.js';
import { ACQUIRE_SWEEP, GIVE_UP, RELEASE_SWEEP, RENEW_SWEEP } from './reconcile-scripts.js';

/** Where a payout of a run stands, as its run's counts say. */
export type PayoutState = PayoutCountedState;
export const PAYOUT_STATES: readonly PayoutState[] = ['queued', 'sending', 'retrying', 'sent', 'refused', 'unknown'];

/** What a payout's record holds, as read back. */
export type PayoutRecord = PayoutLedgerRecord;

/** The parts of bullmq 5's ioredis client and bullmq 6's client that scripts need. */
interface ScriptClient {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  runCommand?(name: string, args: unknown[]): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
  hset(key: string, data: Record<string, string>): Promise<unknown>;
  zrange(key: string, start: number, stop: number): Promise<string[]>;
  zcard(key: string): Promise<number>;
}

const SCRIPTS = {
  payoutRunsClaim: { numberOfKeys: 1, lua: CLAIM },
  payoutRunsBegin: { numberOfKeys: 2, lua: BEGIN },
  payoutRunsSettle: { numberOfKeys: 3, lua: SETTLE },
  payoutRunsResolve: { numberOfKeys: 4, lua: RESOLVE },
  payoutRunsDecisionsAwaitingJobs: { numberOfKeys: 1, lua: DECISIONS_AWAITING_JOBS },
  payoutRunsPause: { numberOfKeys: 1, lua: PAUSE },
  payoutRunsAcquireSweep: { numberOfKeys: 1, lua: ACQUIRE_SWEEP },
  payoutRunsRenewSweep: { numberOfKeys: 1, lua: RENEW_SWEEP },
  payoutRunsReleaseSweep: { numberOfKeys: 1, lua: RELEASE_SWEEP },
  payoutRunsGiveUp: { numberOfKeys: 1, lua: GIVE_UP },
} as const;
type ScriptName = keyof typeof SCRIPTS;

const defined = new WeakSet<object>();

/**
 * The state of every payout of an account's runs, beside the account's BullMQ queue and on its connection: a hash per
 * `request_id`, the counts of each run, and the list of unknown outcomes. The job holds the request; this holds what
 * happened to it, written before and after each request sent. The ledger of payout runs without a `ledger` option.
 */
export class PayoutStateStore implements PayoutLedger {
  /** Lost with Redis's data, as the jobs are: nothing to rebuild them from. */
  readonly durable = false;
  private readonly base: string;

  constructor(
    private readonly queue: Queue,
    private readonly windowMs: number,
  ) {
    this.base = `${queue.qualifiedName}:runs`;
  }

  payoutKeyOf(requestId: string): string {
    return `${this.base}:payout:${payoutKey(requestId)}`;
  }

  private runKeyOf(runId: string): string {
    return `${this.base}:run:${runId}`;
  }

  private get unknownKey(): string {
    return `${this.base}:unknown`;
  }

  private get decidedKey(): string {
    return `${this.base}:decided`;
  }

  /** Claims each `request_id` of a chunk for `runId`, in one call: what became of each, in order. */
  async claim(
    runId: string,
    items: readonly { requestId: string; fingerprint: string }[],
  ): Promise<PayoutLedgerClaim[]> {
    const args: unknown[] = [this.runKeyOf(runId), runId, this.windowMs, Date.now()];
    for (const { requestId, fingerprint } of items) args.push(this.payoutKeyOf(requestId), fingerprint, requestId);
    // The script replies only for the payouts it found already there; every other one it queued for this run.
    const found = (await this.run('payoutRunsClaim', args)) as (number | string)[];
    const claims = items.map((): PayoutLedgerClaim => ({ verdict: 'queued', state: 'queued', runId }));
    for (let at = 0; at < found.length; at += 4) {
      claims[(found[at] as number) - 1] = {
        verdict: found[at + 1] as 'already' | 'conflict',
        state: found[at + 2] as PayoutState,
        runId: found[at + 3] as string,
      };
    }
    return claims;
  }

  async begin(
    requestId: string,
    runId: string,
    token: string,
    takeOver: boolean,
  ): Promise<
    | { step: 'send'; attempt: number; resolution: string | undefined }
    | { step: 'missing' | 'interrupted' }
    | { step: 'settled' }
  > {
    const [step, attempt, resolution] = (await this.run('payoutRunsBegin', [
      this.payoutKeyOf(requestId),
      this.runKeyOf(runId),
      token,
      Date.now(),
      takeOver ? '1' : '0',
    ])) as [string, string | undefined, string | undefined];
    if (step === 'send') return { step, attempt: Number(attempt), resolution: resolution || undefined };
    return { step: step as 'missing' | 'interrupted' | 'settled' };
  }

  /** Replaces the marker `token` (`'*'`: anyone's) with `state`; `lost` when the marker is no longer there. */
  async settle(
    requestId: string,
    runId: string,
    token: string,
    state: Exclude<PayoutState, 'queued' | 'sending'>,
    outcome: object,
  ): Promise<'settled' | 'completed' | 'lost'> {
    const [verdict] = (await this.run('payoutRunsSettle', [
      this.payoutKeyOf(requestId),
      this.runKeyOf(runId),
      this.unknownKey,
      token,
      state,
      JSON.stringify(outcome),
      Date.now(),
      this.windowMs,
      requestId,
    ])) as ['settled' | 'completed' | 'lost'];
    return verdict;
  }

  /** `resolved`, `missing`, or the state the payout is in when it is not unknown. */
  async resolve(
    requestId: string,
    runId: string,
    decision: 'sent' | 'absent',
    resolution: object,
  ): Promise<'resolved' | 'missing' | PayoutState> {
    return (await this.run('payoutRunsResolve', [
      this.payoutKeyOf(requestId),
      this.runKeyOf(runId),
      this.unknownKey,
      this.decidedKey,
      decision,
      JSON.stringify(resolution),
      Date.now(),
      '',
      requestId,
    ])) as 'resolved' | 'missing' | PayoutState;
  }

  /**
   * Pauses the account's queue on every worker for `ms` at least, never shortening a longer pause in force; resolves
   * with the pause in force.
   */
  async pauseAtLeast(ms: number): Promise<number> {
    const args = [this.queue.keys.limiter, ms, String(Number.MAX_SAFE_INTEGER)];
    return Number(await this.run('payoutRunsPause', args));
  }

  /** The sweep lock of the unknown outcomes (see `reconcile-scripts.ts`): `true` while `token` holds it. */
  async sweepLock(step: 'acquire' | 'renew' | 'release', token: string, leaseMs: number): Promise<boolean> {
    const script = (
      { acquire: 'payoutRunsAcquireSweep', renew: 'payoutRunsRenewSweep', release: 'payoutRunsReleaseSweep' } as const
    )[step];
    return Number(await this.run(script, [`${this.base}:sweep-lock`, token, leaseMs])) === 1;
  }

  /**
   * Records that the sweep gave up on a payout parked since `parkedSince` (its record's `since`): `true` for the one
   * call, across instances, that records it, so that the give-up is logged and counted once per payout.
   */
  async recordGiveUp(requestId: string, parkedSince: number): Promise<boolean> {
    return Number(await this.run('payoutRunsGiveUp', [this.payoutKeyOf(requestId), parkedSince])) === 1;
  }

  async read(requestId: string): Promise<PayoutRecord | undefined> {
    const client = await this.client();
    const fields = await client.hgetall(this.payoutKeyOf(requestId));
    if (!fields.state || !fields.run || fields.rid === undefined) return undefined;
    return {
      requestId: fields.rid,
      runId: fields.run,
      state: fields.state as PayoutState,
      attempt: Number(fields.attempt ?? 0),
      outcome: fields.outcome,
      handled: fields.handled ? (JSON.parse(fields.handled) as string[]) : [],
      completesRun: fields.completes === '1',
      resolution: fields.resolution,
      since: Number(fields.since ?? 0),
    };
  }

  async markHandled(requestId: string, handled: readonly string[]): Promise<void> {
    const client = await this.client();
    await client.hset(this.payoutKeyOf(requestId), { handled: JSON.stringify(handled) });
  }

  /** The counts of a run, and when it first had nothing pending; `undefined` for a run nobody enqueued (or expired). */
  async counts(
    runId: string,
  ): Promise<{ counts: Record<PayoutState | 'total', number>; completedAt?: number } | undefined> {
    const client = await this.client();
    const fields = await client.hgetall(this.runKeyOf(runId));
    if (fields.total === undefined) return undefined;
    const counts = Object.fromEntries(
      [...PAYOUT_STATES, 'total' as const].map((state) => [state, Number(fields[state] ?? 0)]),
    ) as Record<PayoutState | 'total', number>;
    return { counts, ...(fields.completedAt !== undefined && { completedAt: Number(fields.completedAt) }) };
  }

  /** The `request_id`s of unknown outcomes, oldest first, and how many there are in all. */
  async unknown(offset: number, limit: number): Promise<{ total: number; requestIds: string[] }> {
    const client = await this.client();
    const [total, requestIds] = await Promise.all([
      client.zcard(this.unknownKey),
      client.zrange(this.unknownKey, offset, offset + limit - 1),
    ]);
    return { total, requestIds };
  }

  async decisionsAwaitingJobs(olderThanMs: number, limit: number): Promise<PayoutLedgerDecision[]> {
    const reply = (await this.run('payoutRunsDecisionsAwaitingJobs', [
      this.decidedKey,
      Date.now() - olderThanMs,
      limit,
    ])) as string[];
    const decisions: PayoutLedgerDecision[] = [];
    for (let index = 0; index < reply.length; index += 2) {
      decisions.push({ requestId: reply[index]!, decision: reply[index + 1] as 'sent' | 'absent' });
    }
    return decisions;
  }

  private async client(): Promise<ScriptClient> {
    // bullmq 6 keeps the client on the queue's backend, bullmq 5 on the queue.
    const { getBackend } = this.queue as unknown as { getBackend?: () => { client: Promise<unknown> } };
    const holder = getBackend ? getBackend.call(this.queue) : (this.queue as unknown as { client: Promise<unknown> });
    return (await holder.client) as ScriptClient;
  }

  /** bullmq 6 runs a defined script with `runCommand`; bullmq 5 hands over ioredis, which adds it as a method. */
  private async run(name: ScriptName, args: unknown[]): Promise<unknown> {
    const client = await this.client();
    if (!defined.has(client)) {
      for (const [script, definition] of Object.entries(SCRIPTS)) client.defineCommand(script, definition);
      defined.add(client);
    }
    if (typeof client.runCommand === 'function') return client.runCommand(name, args);
    return (client as unknown as Record<ScriptName, (...args: unknown[]) => Promise<unknown>>)[name](...args);
  }
}
