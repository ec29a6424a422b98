import type { IncomingMessage, ServerResponse } from 'node:http';
import { ClockCommandError } from './controls.js';

/** Small HTTP helpers of the live server. */

export function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}

/** The Host (or Origin host) names the server answers to: loopback names and the bound host, on its port. */
export function allowedHost(host: string | undefined, port: number, bound: string | undefined): boolean {
  if (host === undefined) return false;
  const names = ['127.0.0.1', 'localhost', '[::1]'];
  if (bound !== undefined) names.push(bound.includes(':') ? `[${bound}]` : bound);
  return names.some((name) => host === `${name}:${port}`);
}

export function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > maxBytes) throw new ClockCommandError('request body too large');
  }
  return body;
}
