/**
 * deploy/: the systemd unit is verified by systemd itself (unknown keys and bad values are only
 * warnings to systemd, so any output fails) and its sandbox rated by `systemd-analyze security`;
 * the Kubernetes examples are parsed and held together: every mount names a volume, pgvigil's
 * config (from the ConfigMap) is valid and every file it names is mounted, the log pgvigil reads
 * is the directory the server writes, and the store is the one writable place. Each document is
 * validated against the Kubernetes API's OpenAPI schema (kubernetes-models) and CloudNativePG's
 * CRD (@kubernetes-models/cloudnative-pg): types and required fields, as the API server checks
 * them; unknown fields pass, as they do without kubectl's --validate=strict.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { Cluster } from '@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { ConfigMap, PersistentVolumeClaim } from 'kubernetes-models/v1';
import { configSchema } from '../../src/config/schema.js';
import { OVERRIDABLE_KEYS } from '../../src/config/load-config.js';
import { describeWithTool, toolPath } from '../helpers/tools.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const UNIT = path.join(REPO, 'deploy/pgvigil.service');

describeWithTool('systemd-analyze', 'deploy/pgvigil.service', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The unit as installed, its ExecStart pointed at this checkout's launcher (verify needs an executable there). */
  const installable = (text: string, name = 'pgvigil.service') => {
    const file = path.join(dir, name);
    writeFileSync(file, text.replace(/^ExecStart=\/usr\/local\/bin\/pgvigil /m, `ExecStart=${REPO}/bin/pgvigil.js `));
    return file;
  };
  const verify = (file: string) => spawnSync(toolPath('systemd-analyze'), ['verify', file], { encoding: 'utf8' });
  const unit = readFileSync(UNIT, 'utf8');
  const directives = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]);

  it('passes systemd-analyze verify without a word', () => {
    expect(unit).toMatch(/^ExecStart=\/usr\/local\/bin\/pgvigil run$/m);
    const result = verify(installable(unit));
    expect({ status: result.status, stderr: result.stderr, stdout: result.stdout }).toEqual({ status: 0, stderr: '', stdout: '' });
    // The check has teeth: a misspelt key is only a warning to systemd, and fails here.
    const typo = verify(installable(unit.replace('ProtectSystem=strict', 'ProtectSytem=strict'), 'typo.service'));
    expect(typo.stderr).toContain("Unknown key 'ProtectSytem'");
  });

  it('is sandboxed: read-only system, the store the one writable path, the log readable through group adm', () => {
    expect(directives('ProtectSystem')).toEqual(['strict']);
    expect(directives('NoNewPrivileges')).toEqual(['yes']);
    expect(directives('SupplementaryGroups')).toEqual(['adm']);
    const store = directives('Environment').find((e) => e?.startsWith('PGVIGIL_DB='))!.slice('PGVIGIL_DB='.length);
    expect(directives('ReadWritePaths')).toEqual([path.dirname(store)]);
    expect(directives('StateDirectory')).toEqual([path.basename(path.dirname(store))]);
    for (const env of directives('Environment')) {
      const name = env!.split('=')[0]!;
      expect([...OVERRIDABLE_KEYS.map((k) => `PGVIGIL_${k.toUpperCase()}`), 'PGVIGIL_CONFIG']).toContain(name);
    }
    const security = execFileSync(toolPath('systemd-analyze'), ['security', '--offline=yes', installable(unit)], { encoding: 'utf8' });
    const exposure = Number(/Overall exposure level for pgvigil\.service: ([\d.]+)/.exec(security)?.[1]);
    // systemd rates 0-10; under 2 is its "OK" band (the usual daemon without a sandbox rates 9.6).
    expect(exposure).toBeLessThan(2);
  });
});

interface Mount { name: string; mountPath: string; readOnly?: boolean; subPath?: string }
interface Container {
  name: string;
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
  volumeMounts?: Mount[];
  securityContext?: { readOnlyRootFilesystem?: boolean; runAsNonRoot?: boolean; runAsUser?: number };
}
interface PodSpec { containers: Container[]; volumes?: Array<{ name: string; configMap?: { name: string } }> }
interface Manifest {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: { template?: { metadata?: { annotations?: Record<string, string> }; spec: PodSpec }; volumeClaimTemplates?: Array<{ metadata: { name: string } }>; [key: string]: unknown };
}

function manifests(file: string): Manifest[] {
  const docs = parseAllDocuments(readFileSync(path.join(REPO, file), 'utf8'));
  for (const doc of docs) expect(doc.errors, file).toEqual([]);
  return docs.map((d) => d.toJS() as Manifest);
}

/** The workload's pod, its pgvigil container and pgvigil's config as the ConfigMap gives it. */
function pgvigilOf(all: Manifest[]) {
  const workload = all.find((m) => m.kind === 'StatefulSet' || m.kind === 'Deployment')!;
  const pod = workload.spec!.template!;
  const pgvigil = pod.spec.containers.find((c) => c.name === 'pgvigil')!;
  const configPath = pgvigil.env!.find((e) => e.name === 'PGVIGIL_CONFIG')!.value!;
  const configMount = pgvigil.volumeMounts!.find((m) => m.mountPath === configPath)!;
  const configMap = all.find((m) => m.kind === 'ConfigMap' && m.metadata.name === pod.spec.volumes!.find((v) => v.name === configMount.name)!.configMap!.name)!;
  const parsed = configSchema.safeParse(parseAllDocuments(configMap.data![configMount.subPath!]!)[0]!.toJS());
  expect(parsed.error?.issues ?? []).toEqual([]);
  return { workload, pod, pgvigil, config: parsed.data! };
}

/** The mount a path lies under in a container, the deepest one. */
function mountOf(container: Container, file: string): Mount | undefined {
  return (container.volumeMounts ?? [])
    .filter((m) => file === m.mountPath || file.startsWith(`${m.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
}

/** The schema model of each kind the examples use; validate() throws with the path of the first violation. */
const SCHEMAS: Record<string, new (data: never) => { validate(): void }> = { Cluster, ConfigMap, Deployment, PersistentVolumeClaim, StatefulSet };

function schemaViolation(manifest: Manifest): string | null {
  const Model = SCHEMAS[manifest.kind];
  if (!Model) return `no schema for kind ${manifest.kind}`;
  try {
    new Model(manifest as never).validate();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

describe.each(['deploy/kubernetes/sidecar.yaml', 'deploy/kubernetes/cloudnativepg.yaml'])('%s', (file) => {
  const all = manifests(file);

  it('is valid against the Kubernetes API schema and CloudNativePG\'s CRD, which reject a broken copy', () => {
    expect(all.map((m) => [m.kind, schemaViolation(m)])).toEqual(all.map((m) => [m.kind, null]));
    // The schema bites: a mount without its volume's name is refused.
    const { pgvigil } = pgvigilOf(all);
    const broken = structuredClone(all.find((m) => m.kind === 'StatefulSet' || m.kind === 'Deployment')!);
    const container = broken.spec!.template!.spec.containers.find((c) => c.name === pgvigil.name)!;
    container.volumeMounts = [...(container.volumeMounts ?? []), { mountPath: '/nowhere' } as Mount];
    expect(schemaViolation(broken)).toMatch(/volumeMounts\/\d+ must have required property name/);
  });

  it('mounts only volumes the pod has, and has no volume nobody mounts', () => {
    const { workload, pod } = pgvigilOf(all);
    const declared = [...(pod.spec.volumes ?? []).map((v) => v.name), ...(workload.spec!.volumeClaimTemplates ?? []).map((t) => t.metadata.name)];
    const mounted = pod.spec.containers.flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name));
    expect([...new Set(mounted)].sort()).toEqual([...new Set(declared)].sort());
  });

  it('gives pgvigil a valid config whose every file is mounted, a read-only root and one writable store', () => {
    const { pod, pgvigil, config } = pgvigilOf(all);
    const files = [config.db, config.http_token_file, ...(config.targets ?? []).flatMap((t) => [t.password_file, typeof t.log === 'string' ? t.log : t.log?.path])]
      .filter((f): f is string => typeof f === 'string');
    for (const f of files) expect(mountOf(pgvigil, f), `${f} is mounted`).toBeDefined();
    expect(pgvigil.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 1000 });
    const writable = (pgvigil.volumeMounts ?? []).filter((m) => !m.readOnly).map((m) => m.mountPath);
    expect(writable).toEqual([path.dirname(config.db!)]);
    expect(pod.metadata?.annotations?.['prometheus.io/port']).toBe(String(config.listen).split(':')[1]);
  });
});

describe('deploy/kubernetes/sidecar.yaml', () => {
  it('has pgvigil read, through the shared volume, the directory the server\'s logging collector writes', () => {
    const { pod, pgvigil, config } = pgvigilOf(manifests('deploy/kubernetes/sidecar.yaml'));
    const postgres = pod.spec.containers.find((c) => c.name === 'postgres')!;
    const setting = (name: string) => postgres.args!.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
    expect(setting('logging_collector')).toBe('on');
    expect(setting('log_file_mode')).toBe('0640');
    expect(setting('log_line_prefix')).toBe('%m [%p] %q%u@%d %e ');
    const serverMount = mountOf(postgres, setting('log_directory')!)!;
    const target = config.targets![0]!.log;
    const log = typeof target === 'string' ? target : target!.path;
    const pgvigilMount = mountOf(pgvigil, log)!;
    expect(pgvigilMount).toMatchObject({ name: serverMount.name, readOnly: true });
    expect(path.relative(pgvigilMount.mountPath, log)).toBe(path.relative(serverMount.mountPath, setting('log_directory')!));
  });
});

describe('deploy/kubernetes/cloudnativepg.yaml', () => {
  it('creates the role pgvigil connects as, with pg_monitor, and sets no parameter CloudNativePG refuses', () => {
    const all = manifests('deploy/kubernetes/cloudnativepg.yaml');
    const cluster = all.find((m) => m.kind === 'Cluster')!.spec as { managed: { roles: Array<{ name: string; inRoles: string[]; login: boolean }> }; postgresql: { parameters: Record<string, string> } };
    const { config } = pgvigilOf(all);
    for (const target of config.targets ?? []) {
      const user = new URL(target.dsn!).username;
      expect(cluster.managed.roles.find((r) => r.name === user)).toMatchObject({ login: true, inRoles: ['pg_monitor'] });
      expect(target.log ?? null).toBeNull();
    }
    for (const refused of ['log_destination', 'logging_collector', 'log_directory', 'log_filename']) expect(cluster.postgresql.parameters).not.toHaveProperty(refused);
  });
});
