/**
 * The path of the first key, at any depth, through which the parsed body could replace an object's prototype once a
 * handler copies it (`Object.assign`, a merge helper): `__proto__`, or `constructor` holding an object with a
 * `prototype`. `JSON.parse` makes such keys plain own properties, harmless until then. These are the keys Fastify's
 * JSON parser refuses by default; refusing them on every adapter gives the same reply to the same bytes.
 *
 * The walk uses its own stack, so a body nested thousands of levels deep costs time in proportion to its size and
 * never overflows the call stack.
 */
export function findPrototypeKey(body: object): string | undefined {
  const values: object[] = [body];
  const paths: string[] = [''];
  for (let value = values.pop(), path = paths.pop()!; value !== undefined; value = values.pop(), path = paths.pop()!) {
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index];
        if (typeof item === 'object' && item !== null) {
          values.push(item);
          paths.push(`${path}[${index}]`);
        }
      }
      continue;
    }
    for (const key of Object.keys(value)) {
      const item: unknown = (value as Record<string, unknown>)[key];
      if (key === '__proto__') return join(path, key);
      if (typeof item === 'object' && item !== null) {
        if (key === 'constructor' && Object.hasOwn(item, 'prototype')) return join(path, 'constructor.prototype');
        values.push(item);
        paths.push(join(path, key));
      }
    }
  }
  return undefined;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
