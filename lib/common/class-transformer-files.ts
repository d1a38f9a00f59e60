import { createRequire } from 'node:module';
import type * as ClassTransformerPackage from 'class-transformer';

/*
 * The parts of class-transformer the package uses, each loaded from its own file rather than the root index, which
 * loads every decorator and helper it has (see `class-validator-files.ts` for why start-up cost matters). These are
 * the files the root index re-exports, so `@Type()` keeps its metadata in the same store the application's own
 * class-transformer reads. A test holds each part to the root export of the same name.
 */

type Parts<Name extends keyof typeof ClassTransformerPackage> = Pick<typeof ClassTransformerPackage, Name>;

const require = createRequire(import.meta.url);

export const { Type } = require('class-transformer/cjs/decorators/type.decorator.js') as Parts<'Type'>;
export const { ClassTransformer } = require('class-transformer/cjs/ClassTransformer.js') as Parts<'ClassTransformer'>;

export type { TypeHelpOptions } from 'class-transformer';

const transformer = new ClassTransformer();

/** class-transformer's `plainToInstance(cls, plain)`: what its root index does with one `ClassTransformer`. */
export function plainToInstance<T extends object>(cls: new (...args: unknown[]) => T, plain: unknown): T {
  return transformer.plainToInstance<T, unknown>(cls, plain);
}
