import { classifyAzureError, type ClassifyContext, type FailureAction } from '../azure/errors.js';

/**
 * An effect's failure, classified once where the effect ran (and its outcome was logged).
 * It travels to the machine in the error event: guards and actions read `action` and never
 * classify the error again.
 */
export class ClassifiedError extends Error {
  /** What the event log records for the original error. */
  readonly code: string;

  constructor(
    readonly original: unknown,
    readonly action: FailureAction,
  ) {
    super(original instanceof Error ? original.message : String(original));
    this.name = 'ClassifiedError';
    this.code = errorCode(original);
  }
}

/** The error classified, unless it already is (`context`: what the attempt was, e.g. spot, which refines TTLs). */
export function classified(error: unknown, context?: ClassifyContext): ClassifiedError {
  return error instanceof ClassifiedError ? error : new ClassifiedError(error, classifyAzureError(error, context));
}

/** What a machine's error event says to do next (an error that did not pass through an effect is classified here). */
export function failureOf(event: { error?: unknown }): FailureAction {
  return classified(event.error).action;
}

/** The error's code for logs: its `code` field, else its message. */
export function errorCode(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.message : String(err);
}
