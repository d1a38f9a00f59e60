/**
 * Headers the module sets itself: the credentials, and what sending and reading bodies depends on. Extra headers
 * (the module's `headers` option or a call's) may not set them, so nothing can replace or unset a credential.
 */
const MODULE_HEADERS = new Set([
  'x-api-key',
  'authorization',
  'proxy-authorization',
  'content-type',
  'content-length',
  'transfer-encoding',
  'accept-encoding',
  'host',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Printable text and tabs: no line breaks, which would split the header, and no control characters.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Extra headers with lowercase names, or the problem: the offending option path and what is expected. */
export type ExtraHeadersCheck = { headers: Record<string, string> } | { option: string; expected: string };

/** Checks extra headers given under `option` (`headers`); never quotes a value, which may be a secret. */
export function checkExtraHeaders(value: unknown, option: string): ExtraHeadersCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { option, expected: 'an object of header names and string values' };
  }
  const headers: Record<string, string> = {};
  for (const [name, headerValue] of Object.entries(value)) {
    const lowercase = name.toLowerCase();
    if (!TOKEN.test(name)) {
      return { option, expected: "header names made of letters, digits and !#$%&'*+.^_`|~-" };
    }
    // Many servers and gateways read `x_api_key` as `X-API-Key` (CGI-style variables name both HTTP_X_API_KEY), so
    // an underscore spelling of a header the module sets would reach the API beside the real one.
    if (MODULE_HEADERS.has(lowercase.replaceAll('_', '-'))) {
      return {
        option: `${option}.${lowercase}`,
        expected: 'no such header: the module sets it (credentials come from apiKey and accessToken)',
      };
    }
    if (typeof headerValue !== 'string' || !FIELD_VALUE.test(headerValue)) {
      return { option: `${option}.${lowercase}`, expected: 'a string without line breaks or control characters' };
    }
    headers[lowercase] = headerValue;
  }
  return { headers };
}
