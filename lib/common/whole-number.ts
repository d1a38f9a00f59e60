/** A safe integer of at least `min`: the one rule behind every count, size and duration the package accepts. */
export function isWholeNumber(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}
