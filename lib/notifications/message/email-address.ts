import { isEmail } from '../../common/class-validator-files.js';

/** Longest address, and longest part before the `@`, that class-validator's `isEmail` accepts. */
const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_PART_LENGTH = 64;

/**
 * The everyday shape of an address: dot-separated ASCII atoms, `@`, ASCII labels of at most 63 characters that
 * neither start nor end with a hyphen, and a top-level domain of 2 to 63 letters. Within the lengths checked with
 * it, every address it matches is one `isEmail` accepts.
 */
const EVERYDAY_ADDRESS =
  /^[\w!#$%&'*+/=?^`{|}~-]+(?:\.[\w!#$%&'*+/=?^`{|}~-]+)*@(?:[A-Za-z\d](?:[A-Za-z\d-]{0,61}[A-Za-z\d])?\.)+[A-Za-z]{2,63}$/;

/** A UTF-16 surrogate not part of a pair: valid in a JSON string, but no character at all. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * class-validator's `isEmail`, the check behind `@IsEmail()`, with a fast path: it costs several times a single
 * pattern test, so everyday addresses are accepted by the pattern and only the rest go through `isEmail`.
 * A string with a lone surrogate is no address, and `isEmail` would throw on it (it measures bytes with `encodeURI`).
 */
export function isEmailAddress(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const atIndex = value.indexOf('@');
  if (value.length <= MAX_ADDRESS_LENGTH && atIndex <= MAX_LOCAL_PART_LENGTH && EVERYDAY_ADDRESS.test(value)) {
    return true;
  }
  return !LONE_SURROGATE.test(value) && isEmail(value);
}
