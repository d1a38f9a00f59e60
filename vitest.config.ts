import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Nest relies on legacy decorators and emitted parameter types for injection and DTOs.
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: ['test/**/*.spec.ts'],
    setupFiles: ['reflect-metadata'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
