import { describe, expect, it } from 'vitest';
import { logLine, MemoryEventLog, type LogEntry } from '../../src/runtime/event-log.js';

describe('event log lines', () => {
  it('are the JSON of each entry, byte for byte, whatever the strings hold', () => {
    const odd = ['plain', 'quote " inside', 'back\\slash', 'new\nline\ttab', '\u0000\u001f', 'é ü 雪', 'pair 😀', 'lone \ud800 high', 'lone \udc00 low', ''];
    const entries: LogEntry[] = [
      { t: 1767225600000, actor: 'nodeclaim/a', kind: 'transition', from: 'launching.creating-vm', to: 'deleting-claim', event: 'error: creating-vm' },
      { t: 1767225600001, actor: 'nodeclaim/a', kind: 'transition', to: 'launching.creating-nic', event: 'start' },
      { t: 5, actor: 'arm/x', kind: 'world', event: 'vm.put', detail: '409 OperationNotAllowed' },
      { t: 6, actor: 'controller', kind: 'controller', event: 'start', detail: undefined },
      { t: Number.NaN, actor: 'x', kind: 'effect' },
      ...odd.map((s, i): LogEntry => ({ t: i, actor: s, kind: 'effect', from: s, to: s, event: s, detail: s })),
    ];
    for (const e of entries) expect(logLine(e)).toBe(JSON.stringify(e));
    const log = new MemoryEventLog();
    for (const e of entries) log.record(e);
    expect(log.toJsonLines()).toBe(entries.map((e) => JSON.stringify(e)).join('\n'));
  });
});
