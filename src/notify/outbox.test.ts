import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { silentLogger } from '../lib/logger.js';
import { AlertStore, type FireInput } from '../store/alert-store.js';
import { openStore, type Db } from '../store/open-store.js';
import type { DeliveryResult } from './notifier.js';
import { Outbox } from './outbox.js';
import { WebhookNotifier } from './webhook.js';

/** A webhook channel whose receiver answers from a script, and can hold a send until released. */
class ScriptedChannel extends WebhookNotifier {
  readonly sent: Array<{ status: string; dedup_key: string; summary: string }> = [];
  readonly answers: DeliveryResult[] = [];
  hold: Promise<void> | null = null;

  constructor(channel = 'hook') {
    super({ channel, url: 'http://127.0.0.1:1/unused' });
  }

  override async send(payload: unknown): Promise<DeliveryResult> {
    if (this.hold) await this.hold;
    this.sent.push(payload as { status: string; dedup_key: string; summary: string });
    return this.answers.shift() ?? { outcome: 'accepted', status: 200 };
  }
}

const retry = (reason = 'ECONNREFUSED'): DeliveryResult => ({ outcome: 'retry', status: null, reason, retryAfterMs: null });

function fire(table: string, summary = `bloat on ${table}`): FireInput {
  return { ruleId: 'r', dedupKey: `r/${table}`, severity: 'warning', target: 'db1', labels: { table }, summary, evidence: { eventIds: [], series: [], facts: {} } };
}

function setup(channels: ScriptedChannel[] = [new ScriptedChannel()], db: Db = openStore(':memory:')) {
  const clock = new ManualClock();
  const store = new AlertStore(db, channels);
  const outbox = new Outbox(db, channels, clock, silentLogger(), { random: () => 0.5, backoff: { baseMs: 1_000, maxMs: 60_000 } });
  const rows = () => db.prepare('SELECT state, attempts, next_attempt_ms, last_error FROM outbox ORDER BY id').all() as Array<{ state: string; attempts: number; next_attempt_ms: number; last_error: string | null }>;
  return { db, clock, store, outbox, rows, channel: channels[0]! };
}

describe('Outbox', () => {
  it('removes a row once its receiver accepted it', async () => {
    const { clock, store, outbox, rows, channel } = setup();
    store.fire(fire('orders'), clock.nowMs());
    await outbox.deliverDue();
    expect(channel.sent.map((p) => p.status)).toEqual(['firing']);
    expect(rows()).toEqual([]);
    expect(outbox.stats()).toEqual([{ channel: 'hook', queueDepth: 0, rejected: 0, delivered: 1, failures: {} }]);
  });

  it('retries with exponential backoff and jitter after network errors', async () => {
    const { clock, store, outbox, rows, channel } = setup();
    channel.answers.push(retry(), retry(), retry());
    store.fire(fire('orders'), clock.nowMs());
    const t0 = clock.nowMs();
    await outbox.deliverDue();
    // base 1 s, attempt 1, jitter 0.5: half fixed + half of the rest.
    expect(rows()[0]).toMatchObject({ state: 'pending', attempts: 1, next_attempt_ms: t0 + 750, last_error: 'ECONNREFUSED' });
    await outbox.deliverDue();
    expect(channel.sent).toHaveLength(1);
    await clock.advance(750);
    await outbox.deliverDue();
    expect(rows()[0]).toMatchObject({ attempts: 2, next_attempt_ms: t0 + 750 + 1_500 });
    await clock.advance(1_500);
    await outbox.deliverDue();
    expect(rows()[0]).toMatchObject({ attempts: 3, next_attempt_ms: t0 + 2_250 + 3_000 });
    await clock.advance(3_000);
    await outbox.deliverDue();
    expect(rows()).toEqual([]);
    expect(channel.sent).toHaveLength(4);
    expect(outbox.stats()[0]!.failures).toEqual({ network: 3 });
  });

  it('keeps a rejected row visible and does not retry it', async () => {
    const { clock, store, outbox, rows, channel } = setup();
    channel.answers.push({ outcome: 'rejected', status: 400, reason: 'HTTP 400: invalid event' });
    store.fire(fire('orders'), clock.nowMs());
    await outbox.deliverDue();
    await clock.advance(3_600_000);
    await outbox.deliverDue();
    expect(channel.sent).toHaveLength(1);
    expect(rows()).toEqual([expect.objectContaining({ state: 'rejected', attempts: 1, last_error: 'HTTP 400: invalid event' })]);
    expect(outbox.stats()[0]).toMatchObject({ queueDepth: 0, rejected: 1, failures: { rejected: 1 } });
  });

  it('never lets a resolve overtake its trigger, while other keys go on', async () => {
    const { clock, store, outbox, channel } = setup();
    channel.answers.push(retry());
    store.fire(fire('orders'), clock.nowMs());
    store.resolve('r/orders', clock.nowMs());
    store.fire(fire('lines'), clock.nowMs());
    await outbox.deliverDue(); // trigger of orders fails: the pass ends
    await outbox.deliverDue(); // lines goes; the resolve of orders waits behind its trigger
    expect(channel.sent.map((p) => `${p.dedup_key}:${p.status}`)).toEqual(['r/orders:firing', 'r/lines:firing']);
    await clock.advance(60_000);
    await outbox.deliverDue();
    expect(channel.sent.map((p) => `${p.dedup_key}:${p.status}`).slice(2)).toEqual(['r/orders:firing', 'r/orders:resolved']);
  });

  it('sends the newer payload when a row was replaced while its send was in flight', async () => {
    const { clock, store, outbox, rows, channel } = setup();
    store.fire(fire('orders'), clock.nowMs());
    let release!: () => void;
    channel.hold = new Promise((resolve) => { release = resolve; });
    const pass = outbox.deliverDue();
    // While the first send is in flight the alert's severity changes: the pending row is replaced.
    store.fire({ ...fire('orders', 'worse'), severity: 'critical' }, clock.nowMs());
    channel.hold = null;
    release();
    await pass;
    await outbox.deliverDue();
    expect(channel.sent.map((p) => p.summary)).toEqual(['bloat on orders', 'worse']);
    expect(rows()).toEqual([]);
  });

  it('holds a channel to its rate limit and resumes when the window allows', async () => {
    class Limited extends ScriptedChannel {
      override readonly rateLimit = { key: 'limited', perMinute: 2 };
    }
    const { clock, store, outbox, rows, channel } = setup([new Limited()]);
    for (const table of ['a', 'b', 'c']) store.fire(fire(table), clock.nowMs());
    await outbox.deliverDue();
    expect(channel.sent).toHaveLength(2);
    expect(rows()).toHaveLength(1);
    await clock.advance(59_999);
    await outbox.deliverDue();
    expect(channel.sent).toHaveLength(2);
    await clock.advance(1);
    await outbox.deliverDue();
    expect(channel.sent).toHaveLength(3);
  });

  it('resumes after a restart: rows written before it are delivered by the next process', async () => {
    const db = openStore(':memory:');
    const first = setup([new ScriptedChannel()], db);
    first.channel.answers.push(retry());
    first.store.fire(fire('orders'), first.clock.nowMs());
    first.store.resolve('r/orders', first.clock.nowMs());
    await first.outbox.deliverDue();
    await first.outbox.stop();

    const second = setup([new ScriptedChannel()], db);
    await second.clock.advance(60_000);
    await second.outbox.deliverDue();
    expect(second.channel.sent.map((p) => p.status)).toEqual(['firing', 'resolved']);
    expect(second.rows()).toEqual([]);
  });

  it('files change events for channels that take them', async () => {
    const { outbox, channel } = setup();
    expect(outbox.sendChange({ target: 'db1', summary: 'REPACK started on shop.public.orders', tsMs: 1, details: { relation: 'orders' } })).toBe(1);
    await outbox.deliverDue();
    expect(channel.sent).toEqual([expect.objectContaining({ kind: 'change', summary: 'REPACK started on shop.public.orders' })]);
  });

  it('refuses two notifiers with one channel name', () => {
    expect(() => setup([new ScriptedChannel('x'), new ScriptedChannel('x')])).toThrow(/channel name "x"/);
  });

  it('delivers on its own timer once started and refreshes firing alerts for expiring channels', async () => {
    class Expiring extends ScriptedChannel {
      override readonly refreshIntervalMs = 60_000;
    }
    const db = openStore(':memory:');
    const channel = new Expiring();
    const clock = new ManualClock();
    const store = new AlertStore(db, [channel]);
    const outbox = new Outbox(db, [channel], clock, silentLogger(), { refresher: store, pollIntervalMs: 1_000 });
    store.fire(fire('orders'), clock.nowMs());
    await outbox.start();
    await outbox.stop();
    expect(channel.sent).toHaveLength(1);
    await outbox.start();
    await clock.advance(60_000);
    await outbox.deliverDue();
    await outbox.stop();
    expect(channel.sent.map((p) => p.status)).toEqual(['firing', 'firing']);
  });

  describe('when the wall clock jumps', () => {
    const MINUTE = 60_000;
    class Limited extends ScriptedChannel {
      override readonly rateLimit = { key: 'limited', perMinute: 2 };
    }

    it('ten minutes back: a retry goes out after its backoff, not once the clock has caught up', async () => {
      const { clock, store, outbox, rows, channel } = setup();
      channel.answers.push(retry());
      store.fire(fire('orders'), clock.nowMs());
      await outbox.deliverDue();
      expect(rows()).toHaveLength(1);
      clock.jumpWallClock(-10 * MINUTE);
      await clock.advance(1_000);
      await outbox.deliverDue();
      expect(channel.sent.map((p) => p.status)).toEqual(['firing', 'firing']);
      expect(rows()).toEqual([]);
    });

    it('ten minutes back: a rate-limited channel resumes when its minute is over', async () => {
      const { clock, store, outbox, rows, channel } = setup([new Limited()]);
      for (const table of ['a', 'b', 'c']) store.fire(fire(table), clock.nowMs());
      await outbox.deliverDue();
      expect(channel.sent).toHaveLength(2);
      clock.jumpWallClock(-10 * MINUTE);
      await clock.advance(MINUTE);
      await outbox.deliverDue();
      expect(channel.sent.map((p) => p.dedup_key)).toEqual(['r/a', 'r/b', 'r/c']);
      expect(rows()).toEqual([]);
    });

    it('an hour forward: every waiting row goes out once, in order for its key', async () => {
      const { clock, store, outbox, rows, channel } = setup();
      channel.answers.push(retry());
      store.fire(fire('orders'), clock.nowMs());
      store.resolve('r/orders', clock.nowMs());
      store.fire(fire('lines'), clock.nowMs());
      await outbox.deliverDue();
      clock.jumpWallClock(60 * MINUTE);
      await outbox.deliverDue();
      await outbox.deliverDue();
      const sent = (key: string) => channel.sent.filter((p) => p.dedup_key === key).map((p) => p.status);
      expect(sent('r/orders')).toEqual(['firing', 'firing', 'resolved']);
      expect(sent('r/lines')).toEqual(['firing']);
      expect(rows()).toEqual([]);
    });
  });

  it('keeps every notification through an hour-long outage, retries with capped backoff, then delivers each once, in order, within the rate limit', async () => {
    const MINUTE = 60_000;
    const STEP = 10_000;
    const PER_MINUTE = 4;
    /** A rate-limited receiver that is down (connection refused) until `down` turns false. */
    class Outage extends ScriptedChannel {
      override readonly rateLimit = { key: 'outage', perMinute: PER_MINUTE };
      down = true;
      readonly attempts: Array<{ atMs: number; key: string }> = [];
      readonly accepted: Array<{ atMs: number; key: string; status: string }> = [];

      override async send(payload: unknown): Promise<DeliveryResult> {
        const { dedup_key: key, status } = payload as { dedup_key: string; status: string };
        this.attempts.push({ atMs: clock.nowMs(), key });
        if (this.down) return retry();
        this.accepted.push({ atMs: clock.nowMs(), key, status });
        return { outcome: 'accepted', status: 200 };
      }
    }
    const receiver = new Outage();
    const { clock, store, outbox, rows } = setup([receiver]);
    const backoffMaxMs = 60_000; // setup()'s cap
    // Over the hour: 10 alerts fire, every other one resolves a few minutes later.
    const expected = new Map<string, string[]>();
    for (let minute = 0; minute < 60; minute++) {
      if (minute % 6 === 0) {
        store.fire(fire(`t${minute / 6}`), clock.nowMs());
        expected.set(`r/t${minute / 6}`, ['firing']);
      }
      if (minute % 12 === 3) {
        store.resolve(`r/t${(minute - 3) / 6}`, clock.nowMs());
        expected.get(`r/t${(minute - 3) / 6}`)!.push('resolved');
      }
      await clock.advance(MINUTE);
      await outbox.deliverDue();
    }
    expect(receiver.accepted).toEqual([]);
    const transitions = [...expected.values()].flat().length;
    expect(rows()).toHaveLength(transitions);
    // The first row was retried all hour, never more than the backoff cap (plus a delivery step) apart.
    const first = receiver.attempts.filter((a) => a.key === 'r/t0').map((a) => a.atMs);
    const gaps = first.slice(1).map((t, i) => t - first[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(backoffMaxMs + MINUTE);
    expect(first.at(-1)! - first[0]!).toBeGreaterThan(55 * MINUTE);

    receiver.down = false;
    const backAt = clock.nowMs();
    for (let i = 0; i < 30 && rows().length > 0; i++) {
      await clock.advance(STEP);
      await outbox.deliverDue();
    }
    expect(rows()).toEqual([]);
    // Each transition once, a resolve never before its trigger.
    const byKey = new Map<string, string[]>();
    for (const a of receiver.accepted) byKey.set(a.key, [...(byKey.get(a.key) ?? []), a.status]);
    expect(byKey).toEqual(expected);
    // Never more than PER_MINUTE in any minute, and all out soon after the receiver came back.
    for (const a of receiver.accepted) {
      expect(receiver.accepted.filter((b) => b.atMs >= a.atMs && b.atMs < a.atMs + MINUTE).length).toBeLessThanOrEqual(PER_MINUTE);
    }
    expect(receiver.accepted.at(-1)!.atMs - backAt).toBeLessThanOrEqual(backoffMaxMs + Math.ceil(transitions / PER_MINUTE) * MINUTE);
  });
});
