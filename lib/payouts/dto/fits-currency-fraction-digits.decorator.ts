import {
  isISO4217CurrencyCode,
  isUppercase,
  registerDecorator,
  type ValidationArguments,
} from '../../common/class-validator-files.js';
import { currencyFractionDigits, fractionDigitsOf } from './currency-fraction-digits.js';

/**
 * The decimal string has no more fraction digits than the currency named by the sibling
 * property allows. Says nothing when either is malformed: their own checks report that.
 */
export function FitsCurrencyFractionDigits(currencyProperty: string): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name: 'fitsCurrencyFractionDigits',
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [currencyProperty],
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          const currency = currencyOf(args);
          if (typeof value !== 'string' || currency === undefined) return true;
          return fractionDigitsOf(value) <= currencyFractionDigits(currency);
        },
        defaultMessage(args: ValidationArguments) {
          const currency = currencyOf(args) ?? '';
          const digits = currencyFractionDigits(currency);
          return digits === 0
            ? `$property must be a whole number for ${currency}`
            : `$property must have at most ${digits} decimal${digits === 1 ? '' : 's'} for ${currency}`;
        },
      },
    });
  };
}

function currencyOf(args: ValidationArguments): string | undefined {
  const currency: unknown = (args.object as Record<string, unknown>)[args.constraints[0] as string];
  return typeof currency === 'string' && isUppercase(currency) && isISO4217CurrencyCode(currency)
    ? currency
    : undefined;
}
