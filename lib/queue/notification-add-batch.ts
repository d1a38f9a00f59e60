import type { JobsOptions, Queue } from 'bullmq';

/** One notification's job, as `Queue.add` takes it. */
export interface NotificationJobToAdd {
  readonly name: string;
  readonly data: unknown;
  readonly opts: JobsOptions;
}

/** What an add settles with when Redis has not answered within the batch's deadline. */
export const ADD_TIMED_OUT: unique symbol = Symbol('no reply from Redis within the deadline');

interface PendingAdd {
  readonly job: NotificationJobToAdd;
  /** Settles the caller's promise; only its first call counts. */
  readonly settle: (outcome: unknown) => void;
}

/** The adds of one turn of the event loop, and the one timer that bounds how long they all wait. */
interface Turn {
  readonly adds: PendingAdd[];
  readonly timer: NodeJS.Timeout;
  /** Adds still without an answer from Redis: the timer is cleared when the last one has its answer. */
  unanswered: number;
}

/**
 * Sends the adds of the notifications that arrive in the same turn of the event loop together, at the end of that
 * turn: one `Queue.add` each, written back to back on the producer's connection, so that Redis gets them in a burst
 * and the socket in few writes. Each caller's promise settles with its own add's outcome, once its own job is stored
 * or with what kept it from being stored, or with `ADD_TIMED_OUT` when Redis has not answered within `timeoutMs` of
 * the turn the add was made in. One timer per turn bounds them all, rather than one per notification: the adds of a
 * turn are made within the same millisecond, so they share the deadline. Not `addBulk`: ioredis builds a pipeline
 * for it by copying every one of BullMQ's scripts onto a new object, which at the batch sizes of a busy route costs
 * more CPU per notification than the adds it groups; and a failed `addBulk` does not say which of its jobs failed.
 */
export class NotificationAddBatch {
  #turn: Turn | undefined;

  constructor(
    private readonly queue: Queue,
    private readonly timeoutMs: number,
  ) {}

  /**
   * `undefined` once the job is stored, `ADD_TIMED_OUT` when Redis has not answered in time, else what kept the job
   * from being stored; never rejects.
   */
  add(job: NotificationJobToAdd): Promise<unknown> {
    return new Promise((settle) => {
      let turn = this.#turn;
      if (turn === undefined) {
        const adds: PendingAdd[] = [];
        turn = this.#turn = { adds, timer: setTimeout(timedOut, this.timeoutMs, adds), unanswered: 0 };
        setImmediate(() => this.#flush());
      }
      turn.adds.push({ job, settle });
    });
  }

  #flush(): void {
    const turn = this.#turn!;
    this.#turn = undefined;
    turn.unanswered = turn.adds.length;
    const answered = () => {
      if (--turn.unanswered === 0) clearTimeout(turn.timer);
    };
    for (const { job, settle } of turn.adds) {
      void this.queue.add(job.name, job.data, job.opts).then(
        () => {
          settle(undefined);
          answered();
        },
        (error: unknown) => {
          settle(error ?? new Error('the job was not stored'));
          answered();
        },
      );
    }
  }
}

/** Settles the adds of a turn that are still waiting; those already settled keep their outcome. */
function timedOut(adds: readonly PendingAdd[]): void {
  for (const { settle } of adds) settle(ADD_TIMED_OUT);
}
