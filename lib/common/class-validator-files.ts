import { createRequire } from 'node:module';
import type * as ClassValidator from 'class-validator';

/*
 * The parts of class-validator the package uses, each loaded from its own file. The root index loads every decorator
 * class-validator has, and with them libphonenumber-js and all of validator.js: about 320 files and 50 ms of CPU when
 * an application starts, more than the rest of the package. class-validator has no `exports` map, and these paths
 * are the same in every release of the supported range (0.14.0 to 0.15.1). They are the files the root index
 * re-exports, so an application that also imports class-validator shares these modules, and every copy keeps its
 * decorators' metadata in one global store: a user's `ValidationPipe` sees the package's rules. A test holds each
 * part to the root export of the same name.
 */

type Parts<Name extends keyof typeof ClassValidator> = Pick<typeof ClassValidator, Name>;

const require = createRequire(import.meta.url);

export const { Equals } = require('class-validator/cjs/decorator/common/Equals.js') as Parts<'Equals'>;
export const { IsDefined } = require('class-validator/cjs/decorator/common/IsDefined.js') as Parts<'IsDefined'>;
export const { IsNotEmpty } = require('class-validator/cjs/decorator/common/IsNotEmpty.js') as Parts<'IsNotEmpty'>;
export const { IsOptional } = require('class-validator/cjs/decorator/common/IsOptional.js') as Parts<'IsOptional'>;
export const { ValidateNested } =
  require('class-validator/cjs/decorator/common/ValidateNested.js') as Parts<'ValidateNested'>;
export const { IsEmail, isEmail } = require('class-validator/cjs/decorator/string/IsEmail.js') as Parts<
  'IsEmail' | 'isEmail'
>;
export const { IsISO8601, isISO8601 } = require('class-validator/cjs/decorator/string/IsISO8601.js') as Parts<
  'IsISO8601' | 'isISO8601'
>;
export const { IsISO31661Alpha2, isISO31661Alpha2 } =
  require('class-validator/cjs/decorator/string/IsISO31661Alpha2.js') as Parts<'IsISO31661Alpha2' | 'isISO31661Alpha2'>;
export const { IsISO4217CurrencyCode, isISO4217CurrencyCode } =
  require('class-validator/cjs/decorator/string/is-iso4217-currency-code.js') as Parts<
    'IsISO4217CurrencyCode' | 'isISO4217CurrencyCode'
  >;
export const { IsUppercase, isUppercase } = require('class-validator/cjs/decorator/string/IsUppercase.js') as Parts<
  'IsUppercase' | 'isUppercase'
>;
export const { Matches } = require('class-validator/cjs/decorator/string/Matches.js') as Parts<'Matches'>;
export const { IsObject } = require('class-validator/cjs/decorator/typechecker/IsObject.js') as Parts<'IsObject'>;
export const { IsString } = require('class-validator/cjs/decorator/typechecker/IsString.js') as Parts<'IsString'>;
export const { registerDecorator } = require('class-validator/cjs/register-decorator.js') as Parts<'registerDecorator'>;
export const { getFromContainer } = require('class-validator/cjs/container.js') as Parts<'getFromContainer'>;
export const { Validator } = require('class-validator/cjs/validation/Validator.js') as Parts<'Validator'>;

export type { ValidationArguments, ValidationError, ValidatorOptions } from 'class-validator';

/** class-validator's `validate(object, options)`: what its root index does with the container's `Validator`. */
export function validate(
  object: object,
  options?: ClassValidator.ValidatorOptions,
): Promise<ClassValidator.ValidationError[]> {
  return getFromContainer(Validator).validate(object, options);
}
