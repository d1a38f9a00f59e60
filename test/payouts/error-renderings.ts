import { inspect } from 'node:util';

/** Every way an error can end up in a log, a response or a snapshot: what a secret must appear in none of. */
export function errorRenderings(error: unknown): string[] {
  const asError = error as Error;
  return [
    String(error),
    asError.message,
    asError.stack ?? '',
    JSON.stringify(error),
    inspect(error, { depth: 10, showHidden: true }),
    inspect(error, { depth: 10, showHidden: true, getters: true }),
  ];
}
