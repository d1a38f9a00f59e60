import { joinPath } from './prototype-key.js';

/** Most fields named; a body with more names the first ones. */
const MAX_NAMED = 10;

/**
 * The paths of the keys and string values of a parsed body that hold U+FFFD, which is what a decoder makes of bytes
 * that are not valid UTF-8: the fields to name when the bytes received were not. The walk uses its own stack, so a
 * body nested thousands of levels deep never overflows the call stack.
 */
export function fieldsWithReplacementCharacters(body: object): string[] {
  const found: string[] = [];
  const values: object[] = [body];
  const paths: string[] = [''];
  for (
    let current = values.pop(), at = paths.pop()!;
    current !== undefined && found.length < MAX_NAMED;
    current = values.pop(), at = paths.pop()!
  ) {
    const isArray = Array.isArray(current);
    for (const key of Object.keys(current)) {
      const path = isArray ? `${at}[${key}]` : joinPath(at, key);
      const item: unknown = (current as Record<string, unknown>)[key];
      if ((!isArray && key.includes('\ufffd')) || (typeof item === 'string' && item.includes('\ufffd'))) {
        found.push(path);
      } else if (typeof item === 'object' && item !== null) {
        values.push(item);
        paths.push(path);
      }
    }
  }
  return found.slice(0, MAX_NAMED).sort();
}
