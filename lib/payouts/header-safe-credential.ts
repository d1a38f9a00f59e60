/**
 * Credentials are sent in headers as is, so they must be printable ASCII without spaces;
 * this also catches a stray newline or a "Bearer " prefix copied from an env file.
 */
export function isHeaderSafeCredential(value: unknown): value is string {
  return typeof value === 'string' && /^[\x21-\x7e]+$/.test(value);
}
