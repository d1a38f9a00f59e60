import { Inject, Injectable, type OnModuleInit, type Provider } from '@nestjs/common';
import { type PayoutsModuleOptions, PayoutsService } from 'nestjs-payouts';
import { argValue } from '../command-line.js';

/**
 * `--telemetry=opentelemetry`: the `telemetry` option with no OpenTelemetry SDK registered, so every span and metric
 * goes to the API's no-op tracer and meter (the package's own cost); `--telemetry=events`: a listener on every event
 * of `PayoutsService`. Without it, neither (the default a user gets).
 */
export type TelemetryMode = 'off' | 'opentelemetry' | 'events';

export function telemetryModeFromArgs(): TelemetryMode {
  const value = argValue('telemetry') ?? 'off';
  if (value !== 'off' && value !== 'opentelemetry' && value !== 'events') {
    throw new Error('expected --telemetry=off|opentelemetry|events');
  }
  return value;
}

/**
 * The module option of the mode. `nestjs-payouts/opentelemetry` (and `@opentelemetry/api`) is loaded only for it, as
 * an application without telemetry never loads it.
 */
export async function telemetryOption(mode: TelemetryMode): Promise<Pick<PayoutsModuleOptions, 'telemetry'>> {
  if (mode !== 'opentelemetry') return {};
  const { payoutsOpenTelemetry } = await import('nestjs-payouts/opentelemetry');
  return { telemetry: payoutsOpenTelemetry() };
}

/** The providers of the mode: for `events`, one that listens to every event and counts it, as the least a user does. */
export function telemetryProviders(mode: TelemetryMode): Provider[] {
  return mode === 'events' ? [EventCounter] : [];
}

@Injectable()
class EventCounter implements OnModuleInit {
  events = 0;

  constructor(@Inject(PayoutsService) private readonly payouts: PayoutsService) {}

  onModuleInit(): void {
    const count = () => void this.events++;
    this.payouts.on('notification', count).on('request', count).on('response', count);
  }
}
