/**
 * compose.yaml: valid against the Compose Specification's JSON schema (compose-spec.json beside this
 * file, vendored unchanged from github.com/compose-spec/compose-spec schema/compose-spec.json at
 * commit 170098ba07d9f53c383a41bfd4c5166b0a4529a6, Apache-2.0); its Parley services set only
 * settings the server has, with values it accepts; their health check probes the port and path a
 * real server started with that environment answers on, and tells a ready node from a stopped one;
 * Prometheus (its config passes promtool) scrapes every node on the port its metrics listen on;
 * Grafana is given the dashboard and the data source it reads.
 * No Compose engine runs on these machines, so this is what checks docs/deployment.md's Compose example.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { loadConfig, type Config } from '../../src/config.js';
import { LONGEST_SHUTDOWN_MS } from '../../src/server.js';
import { readYamlDocuments, schemaValidator, settingEnvNames, startWithEnvironment } from '../helpers/deployment.js';
import { repoRoot } from '../helpers/models.js';
import { skipWhenMissing } from '../helpers/skip.js';

const execFileAsync = promisify(execFile);
const PARLEY_IMAGE = /^(ghcr\.io\/parley-speech\/)?parley(:|$)/;

interface Healthcheck {
  test: string[];
  interval?: string;
  start_period?: string;
}
interface Service {
  image?: string;
  command?: string | string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: Healthcheck;
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

/** The values `${NAME}`, `${NAME:-default}` and `${NAME:?message}` take with `vars` set, as Compose interpolates. */
function interpolate<T>(value: T, vars: Record<string, string>): T {
  if (typeof value === 'string')
    return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
      if (name === undefined) return '$';
      const set = vars[name];
      if (op?.endsWith('-')) return set ? set : arg!;
      if (op?.endsWith('?') && !set) throw new Error(`${whole}: ${arg}`);
      return set ?? '';
    }) as T;
  if (Array.isArray(value)) return value.map((v) => interpolate(v, vars)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, vars)])) as T;
  return value;
}

/** Compose's durations (`1m30s`, `40s`) in seconds. */
function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(h|m|s|ms|us)/g)) total += Number(n) * { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6 }[unit as 'h']!;
  return total;
}

const raw = readYamlDocuments('compose.yaml')[0] as ComposeFile;
const vars = { POSTGRES_PASSWORD: 'compose-test-password', PARLEY_API_KEY: `sk_${'d'.repeat(40)}` };
const compose = interpolate(raw, vars);
const parleyServices = Object.entries(compose.services).filter(([, s]) => PARLEY_IMAGE.test(s.image ?? ''));
const nodes = parleyServices.filter(([, s]) => [s.command].flat()[0] === 'serve');
const nodeConfig = (service: Service): Config => loadConfig(service.environment ?? {});
/** `source:target[:mode]` of a service's volumes. */
const mounts = (service: Service) => (service.volumes ?? []).map((v) => ({ source: v.split(':')[0]!, target: v.split(':')[1]! }));

describe('compose.yaml', () => {
  it('is a valid Compose file', () => {
    const schema = JSON.parse(readFileSync(path.join(repoRoot, 'test/deploy/compose-spec.json'), 'utf8'));
    assert.deepEqual(schemaValidator(schema)(raw), []);
  });

  it('refuses to start without the database password and the first key', () => {
    assert.throws(() => interpolate(raw, { PARLEY_API_KEY: vars.PARLEY_API_KEY }), /POSTGRES_PASSWORD/);
    assert.throws(() => interpolate(raw, { POSTGRES_PASSWORD: vars.POSTGRES_PASSWORD }), /PARLEY_API_KEY/);
  });

  it('sets only Parley settings on Parley services, with values the server accepts', () => {
    assert.ok(parleyServices.length >= 3, 'two nodes and the models pull');
    for (const [name, service] of parleyServices) {
      const unknown = Object.keys(service.environment ?? {}).filter((env) => !settingEnvNames.has(env));
      assert.deepEqual(unknown, [], `${name} sets variables that are no Parley setting`);
      assert.doesNotThrow(() => loadConfig(service.environment ?? {}), `${name}'s settings load`);
    }
  });

  it('runs two nodes on one PostgreSQL database, sharing the models volume, each with its own data dir', () => {
    assert.equal(nodes.length, 2);
    const dataVolumes = new Set<string>();
    for (const [name, service] of nodes) {
      const config = nodeConfig(service);
      const database = new URL(config.databaseUrl);
      assert.match(database.protocol, /^postgres(ql)?:$/, name);
      const postgres = compose.services[database.hostname];
      assert.ok(postgres, `${name}'s DATABASE_URL names the service ${database.hostname}`);
      assert.match(postgres.image ?? '', /^postgres:/);
      assert.equal(postgres.environment?.POSTGRES_PASSWORD, decodeURIComponent(database.password));
      assert.equal(postgres.environment?.POSTGRES_USER, database.username);
      assert.equal(postgres.environment?.POSTGRES_DB, database.pathname.slice(1));
      assert.equal(postgres.healthcheck?.test.slice(0, 2).join(' '), 'CMD pg_isready');
      assert.equal(service.depends_on?.[database.hostname]?.condition, 'service_healthy', `${name} waits for the database`);
      assert.equal(config.apiKey, vars.PARLEY_API_KEY, `${name} stores the operator's key`);

      const byTarget = new Map(mounts(service).map((m) => [path.resolve('/', m.target), m.source]));
      assert.equal(byTarget.get(config.modelsDir), 'models', `${name}'s models dir is the shared volume`);
      const data = byTarget.get(config.dataDir);
      assert.ok(data && compose.volumes[data] !== undefined, `${name}'s data dir is a named volume`);
      dataVolumes.add(data);
      assert.ok(seconds(service.stop_grace_period ?? '10s') >= (LONGEST_SHUTDOWN_MS + config.database.statementTimeoutMs) / 1000, `${name} has time to stop`);
    }
    assert.equal(dataVolumes.size, 2, 'one data dir each');

    const pull = parleyServices.find(([, s]) => [s.command].flat().join(' ').startsWith('models pull'));
    assert.ok(pull, 'a service pulls the packs');
    assert.equal(loadConfig(pull[1].environment ?? {}).modelsDir, nodeConfig(nodes[0]![1]).modelsDir);
    assert.ok(mounts(pull[1]).some((m) => m.source === 'models' && path.resolve('/', m.target) === nodeConfig(nodes[0]![1]).modelsDir));
    for (const [name, service] of nodes) assert.equal(service.depends_on?.[pull[0]]?.condition, 'service_completed_successfully', `${name} waits for the packs`);
  });

  describe('against a real server started with a node\'s settings', () => {
    const [nodeName, node] = nodes[0]!;
    let started: Awaited<ReturnType<typeof startWithEnvironment>>;
    before(async () => {
      started = await startWithEnvironment(node.environment ?? {});
    });
    after(() => started?.server.close());

    it('Prometheus scrapes every node on the port its metrics listen on, and its config passes promtool', async (t) => {
      const prometheus = compose.services.prometheus!;
      const configMount = mounts(prometheus).find((m) => m.target === '/etc/prometheus/prometheus.yml')!;
      const promConfig = readYamlDocuments(configMount.source)[0] as {
        rule_files: string[];
        scrape_configs: Array<{ metrics_path?: string; static_configs: Array<{ targets: string[] }> }>;
      };
      const targets = promConfig.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets)).sort();
      const expected = nodes.map(([name, service]) => {
        const config = nodeConfig(service);
        assert.notEqual(config.metrics.host, '127.0.0.1', `${name}'s metrics listen beyond loopback`);
        return `${name}:${config.metrics.port}`;
      });
      assert.deepEqual(targets, expected.sort());
      for (const scrape of promConfig.scrape_configs) {
        const response = await fetch(`http://127.0.0.1:${started.metricsPort}${scrape.metrics_path ?? '/metrics'}`);
        assert.equal(response.status, 200);
        assert.match(await response.text(), /^# TYPE parley_http_requests_total counter$/m);
      }
      for (const rules of promConfig.rule_files) {
        const source = mounts(prometheus).find((m) => m.target === rules)?.source;
        assert.ok(source && existsSync(path.join(repoRoot, source)), `${rules} is mounted from the repository`);
      }

      const promtool = spawnSync('sh', ['-c', 'command -v promtool']).status === 0;
      const missing = skipWhenMissing(!promtool && "needs Debian's promtool (apt-get install prometheus)");
      if (missing) return t.skip(missing);
      const dir = mkdtempSync(path.join(tmpdir(), 'parley-compose-prometheus-'));
      let text = readFileSync(path.join(repoRoot, configMount.source), 'utf8');
      for (const m of mounts(prometheus).filter((m) => promConfig.rule_files.includes(m.target))) {
        copyFileSync(path.join(repoRoot, m.source), path.join(dir, path.basename(m.target)));
        text = text.replace(m.target, path.join(dir, path.basename(m.target)));
      }
      writeFileSync(path.join(dir, 'prometheus.yml'), text);
      const check = spawnSync('promtool', ['check', 'config', path.join(dir, 'prometheus.yml')], { encoding: 'utf8' });
      assert.equal(check.status, 0, check.stdout + check.stderr);
    });
    it('the health check probes the readiness path on the server\'s port, and tells a ready node from a gone one', async () => {
      const [kind, program, flag, script] = node.healthcheck!.test;
      assert.deepEqual([kind, program, flag], ['CMD', 'node', '-e'], 'node -e: the image has no curl');
      const url = new URL(/fetch\('([^']+)'\)/.exec(script!)![1]!);
      assert.equal(Number(url.port), started.config.port, `${nodeName}'s health check asks the port the server listens on`);
      assert.equal(url.pathname, '/readyz');
      const served = new URL(started.server.url);
      // Asynchronously: the server answering it runs in this process.
      const probe = async () => (await execFileAsync(process.execPath, ['-e', script!.replace(url.origin, served.origin)], { timeout: 10_000 }).then(() => 0, (err: { code?: number }) => err.code));
      assert.equal((await fetch(`${served.origin}${url.pathname}`)).status, 200);
      assert.equal(await probe(), 0, 'ready: exit 0');
      for (const [name, service] of nodes) assert.deepEqual(service.healthcheck?.test, node.healthcheck!.test, `${name} probes the same way`);
      await started.server.close();
      assert.equal(await probe(), 1, 'gone: exit 1');
    });

  });

  it('Grafana is given the dashboard and Prometheus as its data source', () => {
    const grafana = compose.services.grafana!;
    const provisioning = mounts(grafana).find((m) => m.target === '/etc/grafana/provisioning')!;
    const datasources = readYamlDocuments(`${provisioning.source}/datasources/prometheus.yml`)[0] as { datasources: Array<{ type: string; url: string }> };
    const prometheus = datasources.datasources.find((d) => d.type === 'prometheus')!;
    const { hostname, port } = new URL(prometheus.url);
    assert.ok(compose.services[hostname]?.image?.startsWith('prom/prometheus'), 'the data source is the prometheus service');
    assert.ok(compose.services[hostname]!.ports!.some((p) => p.endsWith(`:${port}`)), 'on the port Prometheus listens on');

    const providers = readYamlDocuments(`${provisioning.source}/dashboards/parley.yml`)[0] as { providers: Array<{ options: { path: string } }> };
    const dashboards = mounts(grafana).find((m) => m.target === providers.providers[0]!.options.path);
    assert.equal(dashboards?.source, './deploy/grafana', 'the provider reads the mounted dashboards');
    const dashboard = JSON.parse(readFileSync(path.join(repoRoot, 'deploy/grafana/parley.json'), 'utf8')) as { templating: { list: Array<{ type: string; query: string }> } };
    assert.ok(dashboard.templating.list.some((v) => v.type === 'datasource' && v.query === prometheus.type), 'the dashboard picks a data source of that type');
  });
});
