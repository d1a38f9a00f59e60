/** A value still to write, or text to write as it is (a bracket, or a separator with the next key). */
type Step = { readonly value: unknown } | string;

/**
 * `JSON.stringify(value)` for JSON data (what `JSON.parse` returns, and class instances holding it), at any depth: a
 * verified notification may nest an unknown field ten thousand levels deep, past what the call stack holds, and
 * `JSON.stringify` recurses once per level. Nearly every notification is a few levels deep, and `JSON.stringify`
 * writes it for a quarter of what the writer without recursion costs; it reports a nesting too deep for the stack
 * with a `RangeError`, and only then is the value written again without recursion.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (error) {
    // A value JSON cannot hold (a BigInt) is refused here as it would be by the writer without recursion.
    if (!(error instanceof RangeError)) throw error;
  }
  return jsonTextWithoutRecursion(value);
}

function jsonTextWithoutRecursion(value: unknown): string {
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
