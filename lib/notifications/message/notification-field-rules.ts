/*
 * The text rules of the notification fields, shared by the classes' class-validator decorators and by the parser,
 * so both read the same patterns and give the same messages.
 */

export interface FieldRule {
  readonly pattern: RegExp;
  readonly message: string;
}

export const CARD_LAST_FOUR: FieldRule = { pattern: /^\d{4}$/, message: 'must be 4 digits' };
export const CARD_EXPIRATION_MONTH: FieldRule = {
  pattern: /^(0[1-9]|1[0-2])$/,
  message: 'must be a two-digit month, 01 to 12',
};
export const CARD_EXPIRATION_YEAR: FieldRule = { pattern: /^\d{4}$/, message: 'must be a four-digit year' };
