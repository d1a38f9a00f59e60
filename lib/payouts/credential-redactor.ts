import type { PackageLogger } from '../common/package-logger.js';
import { REDACTED } from '../common/redacted-secret.js';
import type { PayoutsClientConfig } from './payouts-client-config.js';

/**
 * Credentials shorter than this are replaced in free text only where they stand as a word of their own: replaced
 * wherever they appear, a one-letter test key would cut every word holding that letter (`/payou[redacted]s`). No real
 * credential is that short; `warnOfShortCredentials()` says so at boot.
 */
export const WHOLE_WORD_BELOW_CHARS = 8;

/** A letter or digit: a short credential next to one is part of a longer word, not the credential. */
const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Replaces the credentials sent with a request wherever a reply echoes them, before any of the reply is kept on an
 * error. Each credential is looked for as sent and percent-encoded (as a URL carries it); JSON escapes are undone
 * by parsing, see `error-reply-body.ts`. In free text a credential shorter than `WHOLE_WORD_BELOW_CHARS` is replaced
 * only as a word of its own (no letter or digit on either side), so that messages stay readable; in header values,
 * structured fields, it is replaced wherever it appears.
 */
export class CredentialRedactor {
  /** Longest first, so a credential inside another is not left half replaced. */
  readonly #forms: string[];

  constructor(credentials: readonly string[]) {
    const forms = new Set(credentials.flatMap((credential) => [credential, encodeURIComponent(credential)]));
    this.#forms = [...forms].sort((a, b) => b.length - a.length);
  }

  /** Whether `text` carries a credential in one of the forms looked for. */
  finds(text: string): boolean {
    return this.#forms.some((form) => occurrences(text, form, wholeWordsOnly(form)).length > 0);
  }

  text(text: string): string {
    return this.#redacted(text, false);
  }

  headers(headers: Record<string, string>): Record<string, string> {
    const redacted: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) redacted[name] = this.#redacted(value, true);
    return redacted;
  }

  /**
   * A text cut off at an arbitrary byte may end with the first part of a credential, which `text()` cannot
   * recognise: that end is dropped too (the text is incomplete anyway). For a short credential, only a part that
   * starts a word.
   */
  truncatedText(text: string): string {
    const redacted = this.text(text);
    let partial = 0;
    for (const form of this.#forms) {
      for (let length = Math.min(form.length - 1, redacted.length); length > partial; length--) {
        const start = redacted.length - length;
        if (!redacted.endsWith(form.slice(0, length))) continue;
        if (wholeWordsOnly(form) && start > 0 && WORD_CHAR.test(redacted[start - 1]!)) continue;
        partial = length;
      }
    }
    return redacted.slice(0, redacted.length - partial);
  }

  #redacted(text: string, everywhere: boolean): string {
    let redacted = text;
    for (const form of this.#forms) {
      const found = occurrences(redacted, form, !everywhere && wholeWordsOnly(form));
      // From the end, so that the indexes found stay right as the text changes.
      for (const index of found.toReversed()) {
        redacted = `${redacted.slice(0, index)}${REDACTED}${redacted.slice(index + form.length)}`;
      }
    }
    return redacted;
  }
}

/** Where `form` appears in `text`, without overlaps; with `wholeWords`, only where no letter or digit touches it. */
function occurrences(text: string, form: string, wholeWords: boolean): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(form); index !== -1; index = text.indexOf(form, index + 1)) {
    const before = text[index - 1];
    const after = text[index + form.length];
    if (
      wholeWords &&
      ((before !== undefined && WORD_CHAR.test(before)) || (after !== undefined && WORD_CHAR.test(after)))
    ) {
      continue;
    }
    found.push(index);
    index += form.length - 1;
  }
  return found;
}

function wholeWordsOnly(form: string): boolean {
  return form.length < WHOLE_WORD_BELOW_CHARS;
}

/**
 * Warns at boot of a credential shorter than `WHOLE_WORD_BELOW_CHARS`, naming the option, never the value: such a
 * value is most likely a placeholder, and messages redact it only where it stands as a word of its own.
 */
export function warnOfShortCredentials(config: PayoutsClientConfig, logger: PackageLogger): void {
  const credentials: [string, string | undefined][] = [
    ['apiKey', config.apiKey.reveal()],
    ['accessToken', typeof config.accessToken === 'function' ? undefined : config.accessToken.reveal()],
    ['proxy.auth.password', config.transport.proxy ? config.transport.proxy.auth?.password : undefined],
  ];
  for (const [option, value] of credentials) {
    if (value === undefined || value === '' || value.length >= WHOLE_WORD_BELOW_CHARS) continue;
    logger.warn(
      `${option} is shorter than ${WHOLE_WORD_BELOW_CHARS} characters, unlike any real credential: check that it ` +
        'is the right value. Messages hide it only where it stands as a word of its own.',
    );
  }
}

/**
 * The secrets in an authorization header's value (`Basic dXNlcjpwYXNz`): the credentials as sent and, for `Basic`,
 * the password they encode, so that a proxy echoing either, decoded or not, is redacted.
 */
export function authorizationSecrets(value: string | undefined): string[] {
  if (value === undefined) return [];
  const [scheme = '', credentials = ''] = value.trim().split(/\s+/, 2);
  if (scheme.toLowerCase() !== 'basic') return [credentials];
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  return [credentials, decoded.slice(decoded.indexOf(':') + 1)];
}
