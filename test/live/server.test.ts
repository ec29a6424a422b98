import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { MAX_CLIENT_BUFFER_BYTES, startLiveServer } from '../../src/live/server.js';
import type { LiveSource } from '../../src/live/source.js';

/**
 * SSE clients that stop reading: each may hold at most MAX_CLIENT_BUFFER_BYTES on the server,
 * then it is dropped; a client that reads keeps its stream.
 */
function busySource(): LiveSource {
  let tick = 0;
  return {
    title: 'busy',
    now: () => Date.UTC(2026, 0, 1) + tick * 1000,
    // A snapshot that changes on every push (~170 KB: long names keep it cheap to build).
    actorStates: () => {
      tick++;
      const nodeClaims = new Map<string, string>();
      for (let i = 0; i < 600; i++) nodeClaims.set(`gpu-${i}-${tick}-${'x'.repeat(100)}`, 'registered');
      return { nodeClaims, nics: new Map() };
    },
    subscribe: () => () => undefined,
  };
}

/** A client that sends the request and then reads nothing until resumed. */
function stalledClient(port: number): { socket: Socket; bytes: () => number; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let bytes = 0;
  socket.on('connect', () => {
    socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    socket.pause();
  });
  socket.on('data', (c: Buffer) => (bytes += c.length));
  socket.on('error', () => undefined);
  return { socket, bytes: () => bytes, closed: new Promise((resolve) => socket.on('close', () => resolve())) };
}

function until(what: () => boolean, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (what() || Date.now() - started > timeoutMs) {
        clearInterval(poll);
        resolve(what());
      }
    }, 50);
  });
}

describe('live view SSE with slow clients', () => {
  it('drops clients that stop reading once their buffer passes the bound, and keeps streaming to one that reads', async () => {
    const server = await startLiveServer({ source: busySource(), port: 0, pushIntervalMs: 10 });
    const stalled = Array.from({ length: 8 }, () => stalledClient(server.port));
    let received = 0;
    const reader = request({ host: '127.0.0.1', port: server.port, path: '/events' }, (res) => res.on('data', (c: Buffer) => (received += c.length)));
    reader.end();
    try {
      // The reader gets three buffers' worth: the stalled clients have passed the bound by then.
      expect(await until(() => received > 3 * MAX_CLIENT_BUFFER_BYTES, 90_000)).toBe(true);
      // Resumed, each stalled client reads what was buffered for it, then finds its stream closed.
      for (const c of stalled) c.socket.resume();
      let closed = 0;
      for (const c of stalled) void c.closed.then(() => closed++);
      expect(await until(() => closed === stalled.length, 30_000)).toBe(true);
      // At most the bound, plus what the two kernels' socket buffers held.
      for (const c of stalled) expect(c.bytes()).toBeLessThan(MAX_CLIENT_BUFFER_BYTES + 16 * 1024 * 1024);
      // The reader still gets updates.
      const before = received;
      expect(await until(() => received > before, 10_000)).toBe(true);
    } finally {
      reader.destroy();
      for (const c of stalled) c.socket.destroy();
      await server.close();
    }
  });
});
