/** Every field optional at every depth; `undefined` marks a field to remove. */
export type Overrides<T> = {
  [K in keyof T]?: NonNullable<T[K]> extends Record<string, unknown>
    ? Overrides<NonNullable<T[K]>> | undefined
    : T[K] | undefined;
};

/**
 * Returns a copy of `base` with `overrides` merged in: plain objects recursively (and copied, so the
 * result shares no object with the caller's overrides), anything else replaced.
 */
export function applyOverrides<T extends Record<string, unknown>>(base: T, overrides: Overrides<T>): T {
  return merge(base, overrides as Record<string, unknown>) as T;
}

function merge(base: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [field, value] of Object.entries(overrides)) {
    if (value === undefined) {
      delete result[field];
    } else {
      const current = result[field];
      // A data property even for a key such as "__proto__" from a parsed JSON file.
      Object.defineProperty(result, field, {
        value: isPlainObject(value) ? merge(isPlainObject(current) ? current : {}, value) : value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
