import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const lib = fileURLToPath(new URL('./lib/', import.meta.url));

export default defineConfig({
  // Nest relies on legacy decorators and emitted parameter types for injection and DTOs.
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  // Tests import the package by its public names, served from the sources (as tsconfig.json's `paths` do).
  resolve: {
    alias: [
      { find: /^nestjs-payouts$/, replacement: `${lib}index.ts` },
      { find: /^nestjs-payouts\/([a-z-]+)$/, replacement: `${lib}$1/index.ts` },
    ],
  },
  test: {
    include: ['test/**/*.spec.ts'],
    setupFiles: ['reflect-metadata'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
