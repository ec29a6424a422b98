import * as fs from 'node:fs/promises';

/**
 * What the scale benchmark reads about the controller process from outside it: the kernel's
 * account of its memory and CPU, and the API server's audit log of its requests.
 */

/** Peak resident set (VmHWM) of a live process, MiB. */
export async function peakRssMiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

/** User + system CPU seconds a live process has used (USER_HZ is 100 on Linux). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name, which may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Math.round((ticks / 100) * 10) / 10;
}

/**
 * Audit policy: one Metadata event per completed request of the controller's
 * ServiceAccount, nothing for anyone else (KWOK's Lease renewals alone would be thousands a
 * minute).
 */
export function controllerAuditPolicy(user: string): string {
  return [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: ["RequestReceived", "ResponseStarted"]',
    'rules:',
    '- level: Metadata',
    `  users: ["${user}"]`,
    '- level: None',
    '',
  ].join('\n');
}

export interface AuditedRequest {
  verb: string;
  resource: string;
  /** When the API server received it, ms since the epoch. */
  at: number;
}

interface AuditEvent {
  verb?: string;
  objectRef?: { resource?: string; subresource?: string };
  requestReceivedTimestamp?: string;
}

export async function readAudit(file: string): Promise<AuditedRequest[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return [];
  }
  const out: AuditedRequest[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as AuditEvent;
    const resource = e.objectRef?.resource ? `${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}` : 'nonResource';
    out.push({ verb: e.verb ?? 'unknown', resource, at: Date.parse(e.requestReceivedTimestamp ?? '') });
  }
  return out;
}

/** Watches stay open and Lease renewals are leader election's heartbeat: neither is load that grows with the cluster. */
export function isSteadyLoad(r: AuditedRequest): boolean {
  return r.verb !== 'watch' && r.resource !== 'leases';
}

export function countBy<T>(items: readonly T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of items) out[key(t)] = (out[key(t)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** The fake ARM's served calls per operation (all statuses together). */
export function armCallTotals(calls: Record<string, Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [op, byStatus] of Object.entries(calls)) out[op] = Object.values(byStatus).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}
