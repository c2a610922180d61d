/**
 * A config error is printed, logged and shown by `pgvigil check`: bad configs that hold secrets
 * where the error points, and what the error says instead. It still says where and what.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../../test/helpers/temp-dir.js';
import { ConfigError, withoutPasswords } from './config-error.js';
import { loadConfig } from './load-config.js';

const dir = suiteTempDir('config-error');
const SECRET = 'Sekr1t-9f8e7d';

function errorOf(yaml: string, flags: Record<string, string> = {}): ConfigError {
  const file = join(dir, 'pgvigil.yaml');
  writeFileSync(file, yaml);
  try {
    loadConfig({ file, env: {}, flags });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

/** Everything the error carries that could be printed: its message and each problem. */
const printed = (err: ConfigError): string => `${err.message}\n${JSON.stringify(err.problems)}`;

describe('config errors never echo a secret', () => {
  it.each([
    ['a secret of the wrong type', `notify:\n  pagerduty:\n    routing_key: [${SECRET}]\n`, 'notify.pagerduty.routing_key'],
    ['a section holding secrets, of the wrong type', `notify:\n  webhooks:\n    url: http://hook\n    hmac_secret: ${SECRET}\n`, 'notify.webhooks'],
    ['a dsn where a list of targets goes', `targets: postgresql://pgvigil:${SECRET}@db1/postgres\n`, 'targets'],
    ['a target whose dsn has the wrong type, beside a bad key', `targets:\n  - name: db1\n    dsn: [postgresql://pgvigil:${SECRET}@db1/postgres]\n`, 'targets.0.dsn'],
    ['a URL with userinfo that does not parse', `notify:\n  webhooks:\n    - url: "http://hook:${SECRET}@exa mple/x"\n`, 'notify.webhooks.0.url'],
    ['a URL with userinfo listed twice', `notify:\n  alertmanager:\n    url: [http://am:${SECRET}@am1:9093, http://am:${SECRET}@am1:9093]\n`, 'notify.alertmanager.url.1'],
    ['a forward section given as a dsn', `forward:\n  postgres: postgresql://fwd:${SECRET}@central/fleet\n`, 'forward.postgres'],
  ])('%s', (_, yaml, path) => {
    const err = errorOf(yaml);
    expect(err.problems.map((p) => p.path)).toContain(path);
    expect(printed(err)).not.toContain(SECRET);
  });

  it('a keyword/value dsn whose unquoted password holds a space', () => {
    const err = errorOf('', { dsn: `host=db1 password=first ${SECRET}` });
    expect(err.problems.map((p) => p.path)).toEqual(['dsn']);
    expect(printed(err)).not.toContain(SECRET);
  });

  it('still shows values that are not secrets, and where a secret file is', () => {
    const err = errorOf(`listen: 127.0.0.1:99999\nnotify:\n  pagerduty:\n    routing_key_file: /nonexistent/${SECRET}\n`);
    expect(err.message).toContain('(got "127.0.0.1:99999")');
    expect(err.message).toContain(`/nonexistent/${SECRET}`);
  });
});

describe('withoutPasswords', () => {
  it.each([
    [`postgresql://pgvigil:${SECRET}@db1/postgres`, 'postgresql://pgvigil:(hidden)@db1/postgres'],
    [`http://u:a/b@${SECRET}@host/x is listed twice`, 'http://u:(hidden)@host/x is listed twice'],
    [`host=db1 password=${SECRET} user=x`, 'host=db1 password=(hidden) user=x'],
    [`host=db1 password = '${SECRET} \\' x' user=x`, 'host=db1 password = (hidden) user=x'],
    [`postgresql:///db?password=${SECRET}&user=x`, 'postgresql:///db?password=(hidden)&user=x'],
    ['postgresql://pgvigil@db1/postgres', 'postgresql://pgvigil@db1/postgres'],
  ])('%s', (text, expected) => {
    expect(withoutPasswords(text)).toBe(expected);
  });
});
