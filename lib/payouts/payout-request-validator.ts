import { plainToInstance } from '../common/class-transformer-files.js';
import { validate, type ValidationError } from '../common/class-validator-files.js';
import { type PayoutFieldError, PayoutValidationError } from '../errors/payout-validation.error.js';
import { PayoutRequestDto } from './dto/payout-request.dto.js';
import { isCertainlyValidPayoutRequest } from './payout-request-fast-check.js';

/**
 * Rejects with `PayoutValidationError` listing every invalid field of the request.
 * Ordinary valid requests pass a quick check; anything else goes through the DTOs, on a copy
 * (the caller's object is what gets sent), so they alone decide what is wrong and say so.
 */
export async function validatePayoutRequest(request: unknown): Promise<void> {
  if (isCertainlyValidPayoutRequest(request)) return;
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new PayoutValidationError([{ path: '', messages: ['the payout request must be an object'] }]);
  }
  const errors = await validate(toPayoutRequestDto(request), {
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) {
    throw new PayoutValidationError(errors.flatMap((error) => fieldErrors(error, '')));
  }
}

function fieldErrors(error: ValidationError, parentPath: string): PayoutFieldError[] {
  const path = parentPath ? `${parentPath}.${error.property}` : error.property;
  const own = error.constraints ? [{ path, messages: Object.values(error.constraints) }] : [];
  return [...own, ...(error.children ?? []).flatMap((child) => fieldErrors(child, path))];
}

/**
 * class-transformer copies data no DTO describes with `new value.constructor()`, so a field named `constructor`
 * (legal JSON in pass-through data) makes it throw. No DTO declares such a field, so then the request is read
 * again without those fields; the request sent is the caller's, unchanged.
 */
function toPayoutRequestDto(request: object): PayoutRequestDto {
  try {
    return plainToInstance(PayoutRequestDto, request);
  } catch {
    return plainToInstance(PayoutRequestDto, withoutConstructorFields(request));
  }
}

function withoutConstructorFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutConstructorFields);
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (key !== 'constructor') copy[key] = withoutConstructorFields(field);
  }
  return copy;
}
