import type { CredentialRedactor } from './credential-redactor.js';

/**
 * Deeper JSON is kept as text: `JSON.stringify()` of the error (as loggers do) would overflow the stack on it, and
 * no sensible error reply nests this deep.
 */
const MAX_KEPT_JSON_DEPTH = 64;

/**
 * How much of an error reply's body a `PayoutsApiError` keeps, in characters: any error message fits, and an error
 * that is logged, queued or kept in memory never carries the rest of a reply of up to `maxResponseBytes`.
 */
export const ERROR_BODY_EXCERPT_CHARS = 4096;

/** What a `PayoutsApiError` keeps of a reply's body; `truncated` when it is not the whole body. */
export interface KeptErrorBody {
  readonly body: unknown;
  readonly truncated: boolean;
}

/**
 * The body a `PayoutsApiError` keeps, with every credential redacted: the parsed JSON when the reply arrived whole
 * and is JSON of a sane depth within the excerpt's length, otherwise its text, cut to the excerpt's length.
 */
export function errorReplyBody(text: string, whole: boolean, redactor: CredentialRedactor): KeptErrorBody {
  if (!whole) return { body: excerpt(keptText(text, redactor, true)), truncated: true };
  if (text.length > ERROR_BODY_EXCERPT_CHARS) {
    // Redacted first and cut after, so that no credential is cut in two.
    const kept = keptText(text, redactor, false);
    return { body: excerpt(kept), truncated: kept.length > ERROR_BODY_EXCERPT_CHARS };
  }
  const redacted = redactor.text(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(redacted);
  } catch {
    return { body: keptText(text, redactor, false), truncated: false };
  }
  // Without a backslash no JSON string was escaped, so redacting the text covered every string.
  const json = keptJson(parsed, redacted.includes('\\') ? redactor : undefined);
  return { body: json ?? keptText(text, redactor, false), truncated: false };
}

/** The start of a text (already redacted), at most `ERROR_BODY_EXCERPT_CHARS` long, never splitting a surrogate pair. */
function excerpt(text: string): string {
  if (text.length <= ERROR_BODY_EXCERPT_CHARS) return text;
  const end = /[\uD800-\uDBFF]/.test(text[ERROR_BODY_EXCERPT_CHARS - 1]!)
    ? ERROR_BODY_EXCERPT_CHARS - 1
    : ERROR_BODY_EXCERPT_CHARS;
  return text.slice(0, end);
}

/**
 * Walks the parsed reply without recursion, redacting strings and keys when `redactor` is given.
 * Undefined when the reply nests deeper than `MAX_KEPT_JSON_DEPTH`.
 */
function keptJson(parsed: unknown, redactor: CredentialRedactor | undefined): unknown {
  const pending: Array<{ value: object; depth: number }> = [];
  const visit = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return redactor ? redactor.text(value) : value;
    if (typeof value === 'object' && value !== null) pending.push({ value, depth });
    return value;
  };
  const root = visit(parsed, 1);
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.depth > MAX_KEPT_JSON_DEPTH) return undefined;
    const record = next.value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = visit(record[key], next.depth + 1);
      const name = redactor ? redactor.text(key) : key;
      if (name === key && value === record[key]) continue;
      if (name !== key) delete record[key];
      // defineProperty, not assignment: a key such as "__proto__" stays a plain property.
      Object.defineProperty(record, name, { value, writable: true, enumerable: true, configurable: true });
    }
  }
  return root;
}

/**
 * The text with its credentials redacted (and, when `truncated`, a credential cut in half at its end dropped).
 * A credential may also hide behind JSON escapes (`\u0061…`): if undoing them reveals one, the unescaped text is
 * kept instead, redacted.
 */
function keptText(text: string, redactor: CredentialRedactor, truncated: boolean): string {
  const redact = (value: string) => (truncated ? redactor.truncatedText(value) : redactor.text(value));
  const kept = redact(text);
  if (!text.includes('\\')) return kept;
  const unescaped = text.replace(/\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g, (_escape, hex?: string, char?: string) =>
    hex ? String.fromCharCode(parseInt(hex, 16)) : (JSON.parse(`"\\${char}"`) as string),
  );
  const keptUnescaped = redact(unescaped);
  return keptUnescaped === unescaped ? kept : keptUnescaped;
}
