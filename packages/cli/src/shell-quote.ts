/**
 * Joins arguments into one shell command that runs them as they are (the server runs a command
 * string through a shell): `printf '%s\n' "a b"` stays two arguments, `$HOME` stays literal.
 */
export function shellJoin(args: string[]): string {
  return args.map(shellQuote).join(" ");
}

/** One argument, quoted for a POSIX shell when it needs to be. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}
