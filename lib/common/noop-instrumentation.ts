import type {
  NotificationTrace,
  NotificationTraceCarrier,
  PayoutRunJobTrace,
  PayoutsCallTrace,
  PayoutsInstrumentation,
} from '../interfaces/payouts-instrumentation.interface.js';

/** Shared by every trace that records nothing: there is no trace context to carry. */
export const EMPTY_CARRIER: NotificationTraceCarrier = Object.freeze({});

const NOOP_NOTIFICATION_TRACE: NotificationTrace = {
  validated: () => undefined,
  deduped: () => undefined,
  runHandler: (_handler, run) => run(),
  carrier: () => EMPTY_CARRIER,
  end: () => undefined,
};

/** Records nothing; shared by every call, and by the calls an implementation leaves untraced. */
export const NOOP_PAYOUTS_CALL_TRACE: PayoutsCallTrace = {
  run: (send) => send(),
  attemptStarted: () => undefined,
  attemptEnded: () => undefined,
  end: () => undefined,
};

/** Records nothing; shared by every job of a payout run, and by instrumentations without run support. */
export const NOOP_PAYOUT_RUN_JOB_TRACE: PayoutRunJobTrace = {
  run: (work) => work(),
  end: () => undefined,
};

/** The default instrumentation: records nothing, and hands out shared traces so a request allocates nothing. */
export const NOOP_INSTRUMENTATION: Required<PayoutsInstrumentation> = {
  startNotification: () => NOOP_NOTIFICATION_TRACE,
  resumeNotification: () => NOOP_NOTIFICATION_TRACE,
  startPayoutsCall: () => NOOP_PAYOUTS_CALL_TRACE,
  payoutRunCarrier: () => EMPTY_CARRIER,
  startPayoutRunJob: () => NOOP_PAYOUT_RUN_JOB_TRACE,
  payoutRunCompleted: () => undefined,
  payoutRunResolved: () => undefined,
  payoutRunLookedUp: () => undefined,
  payoutRunGivenUp: () => undefined,
};
