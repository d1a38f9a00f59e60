/** A 2xx reply to `request()`. */
export interface PayoutsApiResponse<TBody = unknown> {
  status: number;
  /** Response headers, names in lowercase; repeated headers joined with `", "`. */
  headers: Record<string, string>;
  /**
   * The parsed JSON reply; its text when it is not JSON; `undefined` when it has no body. It is not checked
   * against `TBody`, which only says what you expect.
   */
  body: TBody;
}
