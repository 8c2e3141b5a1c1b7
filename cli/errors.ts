/** A command was called wrongly: its message is printed after the command's name, exit code 2. */
export class UsageError extends Error {}
