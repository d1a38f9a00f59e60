import { Matches } from 'class-validator';

const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** Lowercase words joined by single underscores, such as `mobile_money`. */
export function IsSnakeCase(): PropertyDecorator {
  return Matches(SNAKE_CASE, { message: '$property must be lowercase snake_case, such as "salary_payment"' });
}
