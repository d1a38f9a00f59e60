/** The value of `--<name>=…` on this process's command line (the first one given), or `undefined` without it. */
export function argValue(name: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** Every value of `--<name>=…`, in the order given (`--only=a --only=b`). */
export function argValues(name: string): string[] {
  return process.argv.filter((arg) => arg.startsWith(`--${name}=`)).map((arg) => arg.slice(name.length + 3));
}
