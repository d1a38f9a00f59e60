import { createRequire } from 'node:module';
import type * as Terminus from '@nestjs/terminus';

/** The runtime of `@nestjs/terminus`, as the health indicator uses it. */
export type TerminusRuntime = typeof Terminus;

/**
 * Loads `@nestjs/terminus` when this entry point is loaded, and fails with the install command when it is missing: a
 * static import would only say "Cannot find package". Loaded with `require`, so that this entry point is also
 * `require()`-able (terminus 12 is ES modules, which Node loads that way from 20.19).
 */
function loadTerminus(): TerminusRuntime {
  const require = createRequire(import.meta.url);
  try {
    return require('@nestjs/terminus') as TerminusRuntime;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error('nestjs-payouts/terminus needs the @nestjs/terminus package: npm install @nestjs/terminus', {
      cause: error,
    });
  }
}

export const terminus: TerminusRuntime = loadTerminus();
