/** Base class of every error this package throws, so callers can catch them all with one `instanceof`. */
export class PayoutsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
