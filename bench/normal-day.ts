/**
 * `npm run bench -- normal-day`: the normal day of test/integration/normal-day.ts at a longer
 * scale (NORMAL_DAY_SCALE times the CI one, default 3: about 5 minutes of day) on PG 15 and 18 at
 * once, with every rule at its defaults. Prints each step as it starts and every alert, paging
 * (warning and above) or not. Not a test: nothing fails; the test is the CI-sized day.
 */
import { destroyAllServers, type PgVersion } from '../test/helpers/pg-harness.js';
import { COMPRESSED_DAY, endDay, pagingAlerts, runDay, setUpDay, watchDay, type DayScale } from '../test/integration/normal-day.js';
import { envNumber } from './lib/measure.js';
import type { Benchmark } from './run.js';

const VERSIONS: PgVersion[] = [15, 18];

async function runNormalDay(): Promise<void> {
  const factor = envNumber('NORMAL_DAY_SCALE', 3);
  const scale = Object.fromEntries(Object.entries(COMPRESSED_DAY).map(([key, ms]) => [key, ms * factor])) as unknown as DayScale;
  const t0 = Date.now();
  const say = (version: PgVersion, msg: string) => process.stdout.write(`${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s  PG ${version}  ${msg}\n`);
  try {
    await Promise.all(VERSIONS.map(async (version) => {
      say(version, 'setting up primary, standby, subscription, slots');
      const servers = await setUpDay(version);
      const watchers = await watchDay(servers);
      const log = await runDay(servers, scale, (step) => say(version, step));
      say(version, `day over: ${JSON.stringify(log)}`);
      for (const [deployment, rig] of Object.entries(watchers)) {
        const all = rig.db.prepare('SELECT count(*) FROM alerts').pluck().get() as number;
        const paging = pagingAlerts(rig.db);
        say(version, `${deployment}: ${all} alerts, ${paging.length} paging${paging.map((a) => `\n        ${a}`).join('')}`);
        await rig.stop();
      }
      await endDay(servers);
    }));
  } finally {
    await destroyAllServers();
  }
}

export const benchmark: Benchmark = {
  description: 'a normal day (OLTP, ETL, backups, slots, a standby restart, a bulk load) on PG 15 and 18 at NORMAL_DAY_SCALE (default 3) times the CI length: every alert it raises',
  run: () => runNormalDay(),
};
