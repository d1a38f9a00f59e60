import type {
  NotificationTrace,
  PayoutsInstrumentation,
} from '../interfaces/payouts-instrumentation.interface.js';

const NOOP_NOTIFICATION_TRACE: NotificationTrace = {
  validated: () => undefined,
  runHandler: (_handler, run) => run(),
  end: () => undefined,
};

/** The default instrumentation: records nothing, and hands out one shared trace so a request allocates nothing. */
export const NOOP_INSTRUMENTATION: PayoutsInstrumentation = {
  startNotification: () => NOOP_NOTIFICATION_TRACE,
};
