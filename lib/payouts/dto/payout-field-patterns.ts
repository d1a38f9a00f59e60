// The text rules of the payout DTOs, shared with the fast check of valid requests so both read the same patterns.

/** Lowercase words joined by single underscores, such as `mobile_money`. */
export const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** A non-zero decimal with a dot separator and no superfluous leading zeros: `"5"`, `"0.50"`, `"1200.00"`. */
export const POSITIVE_DECIMAL = /^(?=.*[1-9])(?:0|[1-9]\d*)(?:\.\d+)?$/;

/** E.164 digits without the `+`. */
export const PHONE_NUMBER = /^\d{1,15}$/;

/** At least one character that is not white space. */
export const NOT_BLANK = /\S/;
