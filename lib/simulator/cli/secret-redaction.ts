import { querySecrets } from '../../common/url-without-secrets.js';
import type { SimulateInvocation } from './simulate-arguments.js';

const REDACTED = 'redacted';
/** Shorter values are left alone: hiding every "1" or "en" would garble the output and protect nothing. */
const MIN_SECRET_LENGTH = 4;

/**
 * What a command line may carry that is secret: every query value of the URL (the notification URL usually carries
 * the shared secret) and every query part without `=`, the URL's user name and password, and every header value (the
 * header form of the secret). A receiver's reply can echo any of them, as a framework's 404 page echoes the query
 * string, so every line the command prints goes through this.
 */
export function secretRedactor(invocation: SimulateInvocation): (line: string) => string {
  const { url, headers } = invocation;
  const values = [...querySecrets(url), url.username, url.password, ...Object.values(headers)].filter(
    (value) => value.length >= MIN_SECRET_LENGTH,
  );
  // Also the forms a reply may echo them in: percent-encoded, as in a URL, and with `+` for spaces, as in a form.
  const forms = new Set(values.flatMap((value) => [value, encodeURIComponent(value), formEncoded(value)]));
  // Longest first, so that a secret containing another is hidden whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  return (line) => ordered.reduce((redacted, secret) => redacted.split(secret).join(REDACTED), line);
}

/** `value` as `application/x-www-form-urlencoded` writes it (spaces as `+`). */
function formEncoded(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}
