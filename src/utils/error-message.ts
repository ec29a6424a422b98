/** An error's message, or the thrown value as text when something other than an Error was thrown. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
