import { createHttpHeaders, type HttpClient, type PipelineRequest, type PipelineResponse } from '@azure/core-rest-pipeline';
import type { ArmRestHandler } from './rest.js';

/**
 * An Azure SDK `httpClient` that answers from the fake ARM's REST handler in-process, so
 * the official clients (and their retry, LRO and error pipelines) run against the fake
 * without a socket: `new ComputeManagementClient(cred, sub, { endpoint, httpClient })`.
 * The endpoint must be https:// (the SDK's bearer policy refuses plain http), but no
 * connection is made.
 */
export function createArmHttpClient(handler: ArmRestHandler): HttpClient {
  return {
    async sendRequest(request: PipelineRequest): Promise<PipelineResponse> {
      const url = new URL(request.url);
      const headers: Record<string, string> = {};
      for (const [name, value] of request.headers) headers[name] = value;
      const res = await handler({
        method: request.method,
        url: url.pathname + url.search,
        headers,
        body: bodyText(request.body),
      });
      return { request, status: res.status, headers: createHttpHeaders(res.headers), bodyAsText: res.body ?? null };
    },
  };
}

function bodyText(body: PipelineRequest['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  throw new Error('fake ARM http client: only string and byte request bodies are supported');
}
