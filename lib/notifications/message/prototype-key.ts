/*
 * Keys through which a parsed body could replace an object's prototype once a handler copies it (`Object.assign`,
 * a merge helper): `__proto__`, or `constructor` holding an object with a `prototype`. `JSON.parse` makes such keys
 * plain own properties, harmless until then. These are the keys Fastify's JSON parser refuses by default; refusing
 * them on every adapter gives the same reply to the same bytes.
 */

/** The path at which `key`, holding `value`, could replace a prototype, or `undefined`. */
export function prototypeKeyPath(path: string, key: string, value: unknown): string | undefined {
  if (key === '__proto__') return joinPath(path, key);
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
    return joinPath(path, 'constructor.prototype');
  }
  return undefined;
}

/**
 * The path of the first such key at any depth of `value`, found at `path`. The walk uses its own stack, so a value
 * nested thousands of levels deep costs time in proportion to its size and never overflows the call stack.
 */
export function findPrototypeKey(value: object, path: string): string | undefined {
  const values: object[] = [value];
  const paths: string[] = [path];
  for (
    let current = values.pop(), at = paths.pop()!;
    current !== undefined;
    current = values.pop(), at = paths.pop()!
  ) {
    if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++) {
        const item: unknown = current[index];
        if (typeof item === 'object' && item !== null) {
          values.push(item);
          paths.push(`${at}[${index}]`);
        }
      }
      continue;
    }
    for (const key of Object.keys(current)) {
      const item: unknown = (current as Record<string, unknown>)[key];
      const found = prototypeKeyPath(at, key, item);
      if (found !== undefined) return found;
      if (typeof item === 'object' && item !== null) {
        values.push(item);
        paths.push(joinPath(at, key));
      }
    }
  }
  return undefined;
}

export function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
