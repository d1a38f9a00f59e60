import { type DynamicModule, type InjectionToken, Module, type ModuleMetadata, type Provider } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { DEFAULT_PAYOUTS_ACCOUNT, getPayoutsHealthSourceToken, PayoutsConfigError } from '../index.js';
import { payoutLedgerHealthSource, payoutRunsHealthSource } from './payout-runs-health-source.js';
import { PayoutReconciler } from './payout-reconciler.js';
import {
  type PayoutRunsConfig,
  type PayoutRunsOptions,
  resolvePayoutRunsOptions,
  RUNS_OWNER,
} from './payout-runs-options.js';
import { PayoutRunsService } from './payout-runs.service.js';
import { getPayoutLedgerToken, getPayoutRunsQueueToken, getPayoutRunsToken } from './payout-runs.tokens.js';
import { PayoutRunsWorker } from './payout-runs-worker.js';

/** What `PayoutRunsModule.forRootAsync()` takes: the account is known up front, the rest from a factory. */
export interface PayoutRunsAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The `PayoutsModule` registration's name; the unnamed one without it. */
  account?: string;
  useFactory: (...args: never[]) => Omit<PayoutRunsOptions, 'account'> | Promise<Omit<PayoutRunsOptions, 'account'>>;
  inject?: InjectionToken[];
}

const RUNS_CONFIG = 'PayoutRunsConfig';

/**
 * Payout runs for one account (import it once per account that runs them, beside its `PayoutsModule`): a BullMQ queue
 * per account, throttled to the provider, each payout sent at most once.
 *
 * `PayoutRunsModule.forRoot({ connection: { host, port }, rateLimit: { max: 50, durationMs: 1000 } })`
 */
@Module({})
export class PayoutRunsModule {
  /** The options are checked at bootstrap, as `PayoutsModule`'s are: a bad one fails the app, not the import. */
  static forRoot(options: PayoutRunsOptions): DynamicModule {
    const provider: Provider = { provide: RUNS_CONFIG, useFactory: () => resolvePayoutRunsOptions(options) };
    return build(accountOf(options), [provider], []);
  }

  /** The account is known up front, as the tokens it names are needed before the factory runs; checked at bootstrap. */
  static forRootAsync(options: PayoutRunsAsyncOptions): DynamicModule {
    const { account, useFactory, inject = [], imports = [] } = options;
    const provider: Provider = {
      provide: RUNS_CONFIG,
      inject,
      useFactory: async (...args: never[]) => {
        if (typeof useFactory !== 'function') {
          throw new PayoutsConfigError('useFactory', 'a function returning the options', RUNS_OWNER);
        }
        const resolved = (await useFactory(...args)) as PayoutRunsOptions;
        if (resolved !== null && typeof resolved === 'object' && 'account' in resolved) {
          throw new PayoutsConfigError(
            'account',
            'the account given to forRootAsync(), not by its factory',
            RUNS_OWNER,
          );
        }
        return resolvePayoutRunsOptions({ ...resolved, account });
      },
    };
    return build(account, [provider], imports);
  }
}

/** The account the options name, unchecked (checked with the rest at bootstrap), to name the module's tokens. */
function accountOf(options: PayoutRunsOptions): string | undefined {
  return options !== null && typeof options === 'object' ? options.account : undefined;
}

function build(
  account: string | undefined,
  config: Provider[],
  imports: ModuleMetadata['imports'] = [],
): DynamicModule {
  const name = account ?? DEFAULT_PAYOUTS_ACCOUNT;
  const serviceToken = getPayoutRunsToken(name);
  const queueToken = getPayoutRunsQueueToken(name);
  const healthToken = getPayoutsHealthSourceToken('payout-runs', name);
  const ledgerToken = getPayoutLedgerToken(name);
  const ledgerHealthToken = getPayoutsHealthSourceToken('payout-ledger', name);
  return {
    module: PayoutRunsModule,
    imports: [DiscoveryModule, ...imports],
    providers: [
      ...config,
      {
        provide: serviceToken,
        inject: [RUNS_CONFIG],
        useFactory: (resolved: PayoutRunsConfig) => new PayoutRunsService(resolved, name),
      },
      { provide: queueToken, inject: [serviceToken], useFactory: (runs: PayoutRunsService) => runs.queue },
      { provide: ledgerToken, inject: [serviceToken], useFactory: (runs: PayoutRunsService) => runs.store },
      { provide: ledgerHealthToken, inject: [serviceToken], useFactory: payoutLedgerHealthSource },
      {
        provide: PayoutRunsWorker,
        inject: [RUNS_CONFIG, serviceToken, ModuleRef, DiscoveryService, MetadataScanner],
        useFactory: (
          resolved: PayoutRunsConfig,
          runs: PayoutRunsService,
          moduleRef: ModuleRef,
          discovery: DiscoveryService,
          scanner: MetadataScanner,
        ) => new PayoutRunsWorker(resolved, runs, moduleRef, discovery, scanner),
      },
      {
        provide: PayoutReconciler,
        inject: [RUNS_CONFIG, serviceToken, ModuleRef],
        useFactory: (resolved: PayoutRunsConfig, runs: PayoutRunsService, moduleRef: ModuleRef) =>
          new PayoutReconciler(resolved, runs, moduleRef),
      },
      {
        provide: healthToken,
        inject: [serviceToken, PayoutRunsWorker, PayoutReconciler],
        useFactory: payoutRunsHealthSource,
      },
    ],
    exports: [serviceToken, queueToken, ledgerToken, healthToken, ledgerHealthToken],
  };
}
