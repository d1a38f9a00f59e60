import { REDACTED } from '../common/redacted-secret.js';

/**
 * Replaces the credentials sent with a request wherever a reply echoes them, before any of the reply is kept on an
 * error. Each credential is looked for as sent and percent-encoded (as a URL carries it); JSON escapes are undone
 * by parsing, see `error-reply-body.ts`.
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
    return this.#forms.some((form) => text.includes(form));
  }

  text(text: string): string {
    let redacted = text;
    for (const form of this.#forms) {
      if (redacted.includes(form)) redacted = redacted.replaceAll(form, REDACTED);
    }
    return redacted;
  }

  headers(headers: Record<string, string>): Record<string, string> {
    const redacted: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) redacted[name] = this.text(value);
    return redacted;
  }

  /**
   * A text cut off at an arbitrary byte may end with the first part of a credential, which `text()` cannot
   * recognise: that end is dropped too (the text is incomplete anyway).
   */
  truncatedText(text: string): string {
    const redacted = this.text(text);
    let partial = 0;
    for (const form of this.#forms) {
      for (let length = Math.min(form.length - 1, redacted.length); length > partial; length--) {
        if (redacted.endsWith(form.slice(0, length))) partial = length;
      }
    }
    return redacted.slice(0, redacted.length - partial);
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
