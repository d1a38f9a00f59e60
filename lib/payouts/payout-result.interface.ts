/** A 2xx reply of the payouts API. */
export interface PayoutResult<TBody = Record<string, unknown>> {
  status: number;
  /** Response headers, names in lowercase; repeated headers joined with `", "`. */
  headers: Record<string, string>;
  /** The parsed JSON object of the reply; `{}` when the reply carries no JSON object. */
  body: TBody;
}
