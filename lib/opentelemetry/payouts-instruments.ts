import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import { DURATION_BUCKETS_SECONDS, METRIC_NAMES } from './telemetry-names.js';

/** The metrics of the package, created once per `payoutsOpenTelemetry()` and shared by the registrations it serves. */
export interface PayoutsInstruments {
  readonly notificationDeliveries: Counter;
  readonly notificationDuration: Histogram;
  readonly handlerDuration: Histogram;
  readonly handlerSkips: Counter;
  readonly payoutRequests: Counter;
  readonly payoutDuration: Histogram;
  readonly payoutRetries: Counter;
  readonly runPayouts: Counter;
  readonly runCompletions: Counter;
  readonly runResolutions: Counter;
  readonly reconcileLookups: Counter;
  readonly reconcileGivenUp: Counter;
}

const seconds = (description: string) => ({
  description,
  unit: 's',
  advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
});

export function createPayoutsInstruments(meter: Meter): PayoutsInstruments {
  return {
    notificationDeliveries: meter.createCounter(METRIC_NAMES.notificationDeliveries, {
      description: 'Requests to the notification route (and, in queue mode, handlings by a worker), by outcome',
      unit: '{delivery}',
    }),
    notificationDuration: meter.createHistogram(
      METRIC_NAMES.notificationDuration,
      seconds('Time from a request reaching the notification route to its reply'),
    ),
    handlerDuration: meter.createHistogram(
      METRIC_NAMES.handlerDuration,
      seconds('Time one notification handler took, until its promise settled'),
    ),
    handlerSkips: meter.createCounter(METRIC_NAMES.handlerSkips, {
      description: 'Handlers not run for a re-sent or retried notification, as they had succeeded before',
      unit: '{handler}',
    }),
    payoutRequests: meter.createCounter(METRIC_NAMES.payoutRequests, {
      description: 'createPayout() calls that reached the payouts client, by outcome, whatever their attempts',
      unit: '{request}',
    }),
    payoutDuration: meter.createHistogram(
      METRIC_NAMES.payoutDuration,
      seconds('Time of one createPayout() call over all its attempts and the waits between them'),
    ),
    payoutRetries: meter.createCounter(METRIC_NAMES.payoutRetries, {
      description: 'Attempts of createPayout() sent again, by the reason (error.type) of the attempt before',
      unit: '{retry}',
    }),
    runPayouts: meter.createCounter(METRIC_NAMES.runPayouts, {
      description: 'Outcomes decided by the jobs of payout runs (sent, refused, unknown: parked, retrying)',
      unit: '{payout}',
    }),
    runCompletions: meter.createCounter(METRIC_NAMES.runCompletions, {
      description: 'Payout runs that came to have nothing pending',
      unit: '{run}',
    }),
    runResolutions: meter.createCounter(METRIC_NAMES.runResolutions, {
      description: 'Decisions on unknown outcomes of payout runs, by decision (sent, absent)',
      unit: '{decision}',
    }),
    reconcileLookups: meter.createCounter(METRIC_NAMES.reconcileLookups, {
      description: 'Lookups of parked payouts by the reconcile sweep, by answer (created, absent, unknown, failed)',
      unit: '{lookup}',
    }),
    reconcileGivenUp: meter.createCounter(METRIC_NAMES.reconcileGivenUp, {
      description: 'Payouts still parked as unknown after giveUpAfterMs, once per payout in a process',
      unit: '{payout}',
    }),
  };
}
