import type { JobsOptions, Queue } from 'bullmq';

/** One notification's job, as `Queue.add` takes it. */
export interface NotificationJobToAdd {
  readonly name: string;
  readonly data: unknown;
  readonly opts: JobsOptions;
}

interface PendingAdd {
  readonly job: NotificationJobToAdd;
  /** Settles with `undefined` once the job is stored, or with what kept it from being stored. */
  readonly settle: (failure: unknown) => void;
}

/**
 * Adds the jobs of the notifications that arrive in the same turn of the event loop together: one `addBulk` (one
 * pipeline, one round trip) instead of a round trip each. Each caller's promise settles once its own job is stored,
 * or with what kept it from being stored. `addBulk` reports only that some add failed, not which: then each job of
 * the batch is added again on its own, which stores a job that the bulk did not and leaves one that it did as it is
 * (its id is taken), so that exactly the notifications whose job could not be stored are failed.
 */
export class NotificationAddBatch {
  #pending: PendingAdd[] = [];

  constructor(private readonly queue: Queue) {}

  /** `undefined` once the job is stored, or what kept it from being stored; never rejects. */
  add(job: NotificationJobToAdd): Promise<unknown> {
    return new Promise((settle) => {
      if (this.#pending.length === 0) setImmediate(() => void this.#flush());
      this.#pending.push({ job, settle });
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length === 1) {
      const [{ job, settle }] = batch as [PendingAdd];
      settle(await this.#addOne(job));
      return;
    }
    const stored = await this.queue.addBulk(batch.map(({ job }) => job)).then(
      () => true,
      () => false,
    );
    if (stored) {
      for (const { settle } of batch) settle(undefined);
      return;
    }
    await Promise.all(batch.map(async ({ job, settle }) => settle(await this.#addOne(job))));
  }

  async #addOne(job: NotificationJobToAdd): Promise<unknown> {
    try {
      await this.queue.add(job.name, job.data, job.opts);
      return undefined;
    } catch (error) {
      return error ?? new Error('the job was not stored');
    }
  }
}
