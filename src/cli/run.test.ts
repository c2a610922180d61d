import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import { EXIT } from './exit-codes.js';
import { runDaemon, runUntilSignalled } from './run.js';

function recordingLogger() {
  const records: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void records.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, records };
}

// A store under a regular file cannot be created: buildApp fails before anything starts.
const unopenable = () => loadConfig({ env: {}, flags: { db: path.join(import.meta.filename, 'pgvigil.db') } });

describe('pgvigil run: a start-up failure', () => {
  it('is one line for a person at a terminal', async () => {
    const { log, records } = recordingLogger();
    expect(await runDaemon(unopenable(), log, { terminal: true })).toBe(EXIT.FAILURE);
    expect(records).toHaveLength(1);
    expect(records[0]).not.toHaveProperty('err');
    expect(records[0]!.msg).toMatch(/^pgvigil could not start: \S+pgvigil\.db: cannot open the store: /);
    expect(records[0]!.msg).not.toContain('\n');
  });

  it('keeps the error and its stack in the JSON log', async () => {
    const { log, records } = recordingLogger();
    expect(await runDaemon(unopenable(), log, { terminal: false })).toBe(EXIT.FAILURE);
    expect(records[0]).toMatchObject({ err: { type: 'StoreError', code: 'STORE_OPEN', stack: expect.stringContaining('at openStore') } });
  });
});

describe('pgvigil run: a SIGTERM while starting', () => {
  // The HTTP server answers before start() returns, so a supervisor may stop pgvigil then: it
  // must still stop it in order (flushing), not lose the signal or be killed by it.
  it('stops the app once it has started, and exits 0', async () => {
    const { log, records } = recordingLogger();
    const steps: string[] = [];
    const app = {
      start: async () => {
        process.emit('SIGTERM', 'SIGTERM');
        await new Promise((resolve) => setTimeout(resolve, 50));
        steps.push('started');
      },
      stop: async () => void steps.push('stopped'),
    };
    expect(await runUntilSignalled(() => app, log, { terminal: false })).toBe(EXIT.OK);
    expect(steps).toEqual(['started', 'stopped']);
    expect(records.map((r) => r.msg)).toEqual(['stopping: flushing in-flight batches', 'stopped']);
  }, 5_000);
});
