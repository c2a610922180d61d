// Preload for child processes (node --import): Date.now() and `new Date()` return PGVIGIL_FAKE_NOW
// instead of the machine's clock, so a test can show that an output does not depend on it.
const fakeMs = Date.parse(process.env.PGVIGIL_FAKE_NOW ?? '');
if (Number.isNaN(fakeMs)) throw new Error(`PGVIGIL_FAKE_NOW: expected an ISO date, got ${JSON.stringify(process.env.PGVIGIL_FAKE_NOW)}`);

const RealDate = Date;
class FakeDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(fakeMs);
    else super(...args);
  }

  static now() {
    return fakeMs;
  }
}
globalThis.Date = FakeDate;
