import type { PayoutsInstrumentation } from 'nestjs-payouts';
import { payoutsOpenTelemetry } from 'nestjs-payouts/opentelemetry';
import { runChild } from '../child-main.js';

/**
 * The instrumentation's own time for one notification (one handler) and one `createPayout()` call (two attempts), in
 * a loop, without HTTP: what the route and the client measure within their noise. `noop` is what the module runs
 * with telemetry off; `opentelemetry` is `payoutsOpenTelemetry()` with no SDK registered (the API's no-op tracer and
 * meter), so the difference is the package's own work.
 */
export type InstrumentationVariant = 'noop' | 'opentelemetry';

export interface InstrumentationCostArgs {
  readonly variant: InstrumentationVariant;
  readonly iterations: number;
}

export interface InstrumentationCost {
  readonly notificationMicros: number;
  readonly payoutCallMicros: number;
}

const NOOP_NOTIFICATION = {
  validated: () => undefined,
  deduped: () => undefined,
  runHandler: <T>(_handler: string, run: () => T) => run(),
  carrier: () => ({}),
  end: () => undefined,
};
const NOOP_CALL = {
  run: <T>(send: () => Promise<T>) => send(),
  attemptStarted: () => undefined,
  attemptEnded: () => undefined,
  end: () => undefined,
};
const INSTRUMENTATIONS: Record<InstrumentationVariant, PayoutsInstrumentation> = {
  noop: {
    startNotification: () => NOOP_NOTIFICATION,
    resumeNotification: () => NOOP_NOTIFICATION,
    startPayoutsCall: () => NOOP_CALL,
  },
  opentelemetry: payoutsOpenTelemetry().instrument({ account: 'default' }),
};

const handler = () => undefined;
const target = { method: 'POST', path: '/payouts' };

/** What the route does with the instrumentation for a new notification with one synchronous handler. */
function notification(instrumentation: PayoutsInstrumentation): void {
  const trace = instrumentation.startNotification();
  trace.validated('PAYMENT_METHOD_ADDED');
  trace.deduped('claimed');
  trace.runHandler('CardEvents.added', handler);
  trace.end('acknowledged');
}

/** What the client does with it for a payout answered 503, then 201. */
async function payoutCall(instrumentation: PayoutsInstrumentation): Promise<void> {
  const trace = instrumentation.startPayoutsCall('create_payout', target, 'req_1');
  await trace.run(async () => {
    trace.attemptStarted(1);
    trace.attemptEnded('retrying', 503, undefined);
    trace.attemptStarted(2);
    trace.attemptEnded('succeeded', 201, undefined);
  });
  trace.end(undefined);
}

async function measure({ variant, iterations }: InstrumentationCostArgs): Promise<InstrumentationCost> {
  const instrumentation = INSTRUMENTATIONS[variant];
  let start = performance.now();
  for (let i = 0; i < iterations; i++) notification(instrumentation);
  const notificationMicros = ((performance.now() - start) * 1000) / iterations;
  start = performance.now();
  for (let i = 0; i < iterations; i++) await payoutCall(instrumentation);
  const payoutCallMicros = ((performance.now() - start) * 1000) / iterations;
  return { notificationMicros, payoutCallMicros };
}

await runChild(async () => ({
  commands: { run: (args) => measure(args as InstrumentationCostArgs) },
  close: async () => undefined,
}));
