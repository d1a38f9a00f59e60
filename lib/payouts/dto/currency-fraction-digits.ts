const fractionDigitsByCurrency = new Map<string, number>();

/** How many decimals an amount in `currency` may have (JPY 0, EUR 2, KWD 3), as the runtime's ICU data says. */
export function currencyFractionDigits(currency: string): number {
  let digits = fractionDigitsByCurrency.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    fractionDigitsByCurrency.set(currency, digits);
  }
  return digits;
}

/** How many digits follow the dot of a decimal string. */
export function fractionDigitsOf(decimal: string): number {
  const dot = decimal.indexOf('.');
  return dot === -1 ? 0 : decimal.length - dot - 1;
}
