/** Response headers as plain strings; repeated headers such as `set-cookie` are joined. */
export function replyHeaders(headers: Record<string, unknown>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && value !== null) {
      result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    }
  }
  return result;
}

/** The reply as JSON when it parses, otherwise its text. */
export function replyBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
