import { AsyncLocalStorage } from 'node:async_hooks';
import type { PipelinePolicy, PipelineResponse } from '@azure/core-rest-pipeline';
import { AzureError, type AzureErrorInfo } from '../ports/azure.js';
import type { Clock } from '../ports/clock.js';
import { armErrorDetails, parseRetryAfterSeconds, toAzureError } from './sdk-errors.js';

/**
 * Long-running operations on the injected Clock. The SDK's `pollUntilDone` (and awaiting a
 * poller, which calls it) waits with real timers from @azure/core-util, and so does the
 * pipeline's default retry policy. Under a virtual clock those would either stall the
 * simulation or make it depend on wall time. So the adapter lets the SDK send the initial
 * request and each poll request (it still owns URL choice, Azure-AsyncOperation/Location
 * handling, the final GET and deserialisation), and does every wait itself via clock.setTimer.
 */

/** The members of @azure/core-lro's PollerLike the driver uses (structural: core-lro is not a direct dependency). */
export interface LroPoller<T> {
  readonly isDone: boolean;
  readonly operationState: { status: string; error?: Error; result?: T } | undefined;
  readonly result: T | undefined;
  submitted(): Promise<void>;
  poll(options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

/** Waits on the injected clock. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimer(ms, resolve);
  });
}

/**
 * What the last response an LRO saw said beyond its status, collected by `lroObserverPolicy`:
 * its Retry-After, and ARM's error.details[] when it was refused (the SDK's error drops them).
 */
class LroResponses {
  retryAfterSeconds: number | undefined;
  errorDetails: AzureErrorInfo['details'];
  observe(response: PipelineResponse, nowMs: number): void {
    this.retryAfterSeconds = parseRetryAfterSeconds(response.headers, nowMs);
    this.errorDetails = response.status >= 400 ? armErrorDetails(response.bodyAsText) : undefined;
  }
}

/**
 * Async context per LRO: the observer policy runs inside the SDK's request chain, and
 * AsyncLocalStorage is how it finds the operation it belongs to when many LROs share a
 * client (a single shared slot would mix up their Retry-After values).
 */
const lroContext = new AsyncLocalStorage<LroResponses>();

export function lroObserverPolicy(clock: Clock): PipelinePolicy {
  return {
    name: 'azflexLroObserver',
    async sendRequest(request, next) {
      const response = await next(request);
      lroContext.getStore()?.observe(response, clock.now());
      return response;
    },
  };
}

export interface LroTiming {
  /** Poll interval when ARM sends no Retry-After. */
  defaultPollMs: number;
  /** Bounds on ARM's Retry-After for polls (ARM asks for 10-60 s; a fake may say 0). */
  minPollMs: number;
  maxPollMs: number;
  /** Give up waiting (RequestTimeout, transient) after this long; the resource may still converge. */
  timeoutMs: number;
}

export const DEFAULT_LRO_TIMING: LroTiming = { defaultPollMs: 10_000, minPollMs: 1_000, maxPollMs: 60_000, timeoutMs: 30 * 60_000 };

/**
 * Starts an LRO with `start` (an SDK call returning its poller) and drives it to the end on
 * the clock. Resolves with the poller's result; rejects with an AzureError. Never awaits
 * the poller itself: it is a thenable whose `then` runs pollUntilDone on real timers.
 */
export async function driveLro<T>(clock: Clock, timing: LroTiming, what: string, start: () => LroPoller<T>): Promise<T | undefined> {
  const responses = new LroResponses();
  try {
    return await drive(clock, timing, what, start, responses);
  } catch (err) {
    throw toAzureError(err, clock.now(), responses.errorDetails);
  }
}

async function drive<T>(clock: Clock, timing: LroTiming, what: string, start: () => LroPoller<T>, responses: LroResponses): Promise<T | undefined> {
  const holder = lroContext.run(responses, () => ({ poller: start() }));
  const poller = holder.poller;
  await poller.submitted();
  const deadline = clock.now() + timing.timeoutMs;
  while (!poller.isDone) {
    const askedMs = responses.retryAfterSeconds !== undefined ? responses.retryAfterSeconds * 1000 : timing.defaultPollMs;
    await sleep(clock, Math.min(timing.maxPollMs, Math.max(timing.minPollMs, askedMs)));
    if (clock.now() > deadline) {
      throw new AzureError('RequestTimeout', 408, `${what} still running after ${Math.round(timing.timeoutMs / 1000)} s`);
    }
    responses.retryAfterSeconds = undefined;
    await lroContext.run(responses, () => poller.poll());
  }
  const state = poller.operationState;
  if (state?.status === 'failed') throw state.error ?? new Error('The long-running operation has failed');
  if (state?.status === 'canceled') throw new AzureError('Unknown', 0, `${what} was canceled`);
  return poller.result;
}

/**
 * Sends an LRO's initial request and returns once ARM accepted it, without polling: for
 * deletes the caller observes to their end. Rejects with an AzureError.
 */
export async function submitLro<T>(clock: Clock, start: () => LroPoller<T>): Promise<void> {
  const responses = new LroResponses();
  try {
    const poller = lroContext.run(responses, () => start());
    await poller.submitted();
    const state = poller.operationState;
    if (state?.status === 'failed') throw state.error ?? new Error('The long-running operation has failed');
  } catch (err) {
    throw toAzureError(err, clock.now(), responses.errorDetails);
  }
}

export interface ReadRetryOptions {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_READ_RETRY: ReadRetryOptions = { maxRetries: 3, baseDelayMs: 1_000, maxDelayMs: 60_000 };

const RETRYABLE_STATUS: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Replaces the SDK's retry policy (real timers) for reads only: GETs (including LRO polls,
 * whose failure would otherwise mark the whole operation failed) are retried on
 * 429/5xx/socket errors, waiting Retry-After or exponential backoff on the clock.
 * PUT and DELETE are not retried here: their failures go to the controller, which
 * classifies them (throttled, transient, quota...) and owns the backoff and the metrics.
 */
export function clockReadRetryPolicy(clock: Clock, options: ReadRetryOptions): PipelinePolicy {
  return {
    name: 'azflexClockReadRetry',
    async sendRequest(request, next) {
      if (request.method !== 'GET') return next(request);
      for (let attempt = 0; ; attempt++) {
        let response: PipelineResponse | undefined;
        let failure: unknown;
        try {
          response = await next(request);
        } catch (err) {
          failure = err;
        }
        const retryable = response ? RETRYABLE_STATUS.has(response.status) : isSocketFailure(failure);
        if (!retryable || attempt >= options.maxRetries) {
          if (response) return response;
          throw failure;
        }
        const retryAfter = response ? parseRetryAfterSeconds(response.headers, clock.now()) : undefined;
        const backoff = options.baseDelayMs * 2 ** attempt;
        await sleep(clock, Math.min(options.maxDelayMs, retryAfter !== undefined ? retryAfter * 1000 : backoff));
      }
    },
  };
}

function isSocketFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'AbortError') return false;
  // RestErrors without a status are transport failures (REQUEST_SEND_ERROR, ECONNRESET...).
  const status = (err as Error & { statusCode?: unknown }).statusCode;
  return err.name === 'RestError' && (status === undefined || status === 0);
}
