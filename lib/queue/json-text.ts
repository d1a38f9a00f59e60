/** A value still to write, or text to write as it is (a bracket, or a separator with the next key). */
type Step = { readonly value: unknown } | string;

/**
 * `JSON.stringify(value)` for JSON data (what `JSON.parse` returns, and class instances holding it), without
 * recursion: a verified notification may nest an unknown field ten thousand levels deep, past what the call stack
 * holds, and `JSON.stringify` recurses once per level.
 */
export function jsonText(value: unknown): string {
  const parts: string[] = [];
  const steps: Step[] = [{ value }];
  while (steps.length > 0) {
    const step = steps.pop()!;
    if (typeof step === 'string') {
      parts.push(step);
      continue;
    }
    const current = toJsonValue(step.value);
    if (current === null || typeof current !== 'object') {
      parts.push(JSON.stringify(current) ?? 'null');
    } else if (Array.isArray(current)) {
      parts.push('[');
      steps.push(']');
      for (let index = current.length - 1; index >= 0; index--) {
        steps.push({ value: current[index] });
        if (index > 0) steps.push(',');
      }
    } else {
      // As JSON.stringify does, a property whose value JSON cannot hold is left out.
      const entries = Object.entries(current).filter(([, field]) => isWritable(toJsonValue(field)));
      parts.push('{');
      steps.push('}');
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, field] = entries[index]!;
        steps.push({ value: field });
        steps.push(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`);
      }
    }
  }
  return parts.join('');
}

/** What JSON.stringify writes for a value: its `toJSON()` when it has one (a `Date`). */
function toJsonValue(value: unknown): unknown {
  const toJSON = (value as { toJSON?: unknown } | null | undefined)?.toJSON;
  return typeof toJSON === 'function' ? (toJSON as () => unknown).call(value) : value;
}

function isWritable(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}
