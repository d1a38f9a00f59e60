/**
 * Runs `step` on each item in order, at most `limit` at once. Once a step fails no other starts; the ones already
 * started are waited for, then the first error is thrown, so that whatever each step recorded of its outcome is final
 * when the caller reads it.
 */
export async function eachInFlight<T>(
  items: readonly T[],
  limit: number,
  step: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await step(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== undefined) throw failure.error;
}
