/** A user mistake (bad flag value, bad scenario file): reported as one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
