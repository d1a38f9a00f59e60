/** An HTTP field name as RFC 9110 defines it: one or more token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~\w-]+$/;

export function isHttpHeaderName(value: unknown): value is string {
  return typeof value === 'string' && HEADER_NAME.test(value);
}
