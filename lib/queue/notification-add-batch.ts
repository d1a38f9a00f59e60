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
 * Sends the adds of the notifications that arrive in the same turn of the event loop together, at the end of that
 * turn: one `Queue.add` each, written back to back on the producer's connection, so that Redis gets them in a burst
 * and the socket in few writes. Each caller's promise settles with its own add's outcome, once its own job is stored
 * or with what kept it from being stored. Not `addBulk`: ioredis builds a pipeline for it by copying every one of
 * BullMQ's scripts onto a new object, which at the batch sizes of a busy route costs more CPU per notification than
 * the adds it groups; and a failed `addBulk` does not say which of its jobs failed.
 */
export class NotificationAddBatch {
  #pending: PendingAdd[] = [];

  constructor(private readonly queue: Queue) {}

  /** `undefined` once the job is stored, or what kept it from being stored; never rejects. */
  add(job: NotificationJobToAdd): Promise<unknown> {
    return new Promise((settle) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ job, settle });
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    for (const { job, settle } of batch) void this.#addOne(job).then(settle);
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
