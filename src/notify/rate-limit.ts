/**
 * Per-key send limit over a sliding minute (PagerDuty throttles at about 120 events a minute per
 * routing key). A sliding window, unlike a token bucket, never lets more than `perMinute` sends
 * into any 60-second span, bursts included.
 */
const WINDOW_MS = 60_000;

export class RateLimit {
  private readonly sent = new Map<string, number[]>();

  /**
   * Records a send for `key` and returns 0 when one is allowed now; otherwise returns how many
   * milliseconds until one is, and records nothing.
   */
  take(key: string, perMinute: number, nowMs: number): number {
    const times = this.sent.get(key) ?? [];
    while (times.length > 0 && times[0]! <= nowMs - WINDOW_MS) times.shift();
    if (times.length >= perMinute) {
      this.sent.set(key, times);
      return times[0]! + WINDOW_MS - nowMs;
    }
    times.push(nowMs);
    this.sent.set(key, times);
    return 0;
  }
}
