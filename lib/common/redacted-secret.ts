import { inspect } from 'node:util';

/** What every credential is shown as wherever it could reach a log line, an error or a reply kept for the caller. */
export const REDACTED = '[redacted]';

/**
 * Holds a credential so that it cannot reach a log line by accident:
 * `String()`, `JSON.stringify()` and `util.inspect()` all print `[redacted]`.
 * Only `reveal()` returns the value, at the one place that puts it on the wire.
 */
export class RedactedSecret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
