import type * as Terminus from '@nestjs/terminus';

/** The runtime of `@nestjs/terminus`, as the health indicator uses it. */
export type TerminusRuntime = typeof Terminus;

/**
 * Loads `@nestjs/terminus` when this entry point is loaded, and fails with the install command when it is missing: a
 * static import would only say "Cannot find package".
 */
async function loadTerminus(): Promise<TerminusRuntime> {
  try {
    return await import('@nestjs/terminus');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error('nestjs-payouts/terminus needs the @nestjs/terminus package: npm install @nestjs/terminus', {
      cause: error,
    });
  }
}

export const terminus: TerminusRuntime = await loadTerminus();
