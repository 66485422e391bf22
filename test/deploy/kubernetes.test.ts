/**
 * deploy/kubernetes/: every object is valid against the Kubernetes API schemas (kubernetes-models;
 * the ServiceMonitor against the Prometheus Operator's CRD, @kubernetes-models/prometheus-operator),
 * the kustomization lists exactly the manifests there are, and the objects fit the server: the
 * environment holds only Parley settings (resolved from the Secret) with values it accepts, the
 * ports are the ones it listens on, the probes' paths answer on a real server started with that
 * environment, the metrics port stays in the cluster, and a stopping pod has the time the server's
 * shutdown may take. No cluster runs on these machines, so this is what checks the manifests
 * docs/deployment.md's `kubectl apply -k deploy/kubernetes` example applies.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type Config } from '../../src/config.js';
import { findCatalogueEntry } from '../../src/models/catalogue.js';
import { LONGEST_SHUTDOWN_MS } from '../../src/server.js';
import { readYamlDocuments, settingEnvNames, startWithEnvironment } from '../helpers/deployment.js';
import { repoRoot } from '../helpers/models.js';

const DIR = 'deploy/kubernetes';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
  stringData?: Record<string, string>;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: Array<{ name: string; containerPort: number }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
}

const kustomization = readYamlDocuments(`${DIR}/kustomization.yaml`)[0] as { resources: string[]; images?: Array<{ name: string }> };
const manifestFiles = readdirSync(path.join(repoRoot, DIR)).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
const objects = kustomization.resources.flatMap((file) => readYamlDocuments(`${DIR}/${file}`).filter(Boolean) as K8sObject[]);
const only = (kind: string): K8sObject => {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0]!;
};

const deployment = only('Deployment');
const pod = deployment.spec.template;
const parley: Container = pod.spec.containers.find((c: Container) => c.args?.[0] === 'serve');
const secret = only('Secret');
/** Values a filled-in Secret would hold, for the keys it has. */
const filledSecret: Record<string, string> = { 'database-url': 'postgres://parley:secret@postgres:5432/parley', 'api-key': `sk_${'e'.repeat(40)}` };

/** A container's environment, with Secret references resolved from `secretData`. */
function environment(container: Container, secretData: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    (container.env ?? []).map((v) => {
      const ref = v.valueFrom?.secretKeyRef;
      if (!ref) return [v.name, v.value ?? ''];
      assert.equal(ref.name, secret.metadata.name, `${v.name} comes from the Secret`);
      assert.ok(ref.key in secretData, `the Secret has ${ref.key} (for ${v.name})`);
      return [v.name, secretData[ref.key]!];
    }),
  );
}

const config: Config = loadConfig(environment(parley, filledSecret));
const containerPort = (port: string | number) => (typeof port === 'number' ? port : parley.ports!.find((p) => p.name === port)!.containerPort);
/** Kubernetes quantities of memory in bytes. */
const bytes = (q: string) => Number(/^\d+/.exec(q)![0]) * ({ Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, '': 1 }[/[A-Za-z]*$/.exec(q)![0]] ?? NaN);
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('deploy/kubernetes', () => {
  it('the kustomization lists every manifest, each once, and only manifests that exist', () => {
    assert.deepEqual([...kustomization.resources].sort(), [...manifestFiles].sort());
    assert.equal(new Set(kustomization.resources).size, kustomization.resources.length);
    for (const image of kustomization.images ?? []) assert.ok(objects.some((o) => o.kind === 'Deployment' && JSON.stringify(o).includes(`"${image.name}:`)), `${image.name} is an image used`);
  });

  it('every object is valid against the Kubernetes schemas', async () => {
    assert.deepEqual(
      [...new Set(objects.map((o) => o.kind))].sort(),
      ['Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'PersistentVolumeClaim', 'PodDisruptionBudget', 'Secret', 'Service', 'ServiceMonitor'],
    );
    for (const object of objects) {
      const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
      const module = group === 'monitoring.coreos.com' ? `@kubernetes-models/prometheus-operator/${group}/${version}` : `kubernetes-models/${group ? `${group}/` : ''}${version}`;
      const Model = ((await import(module)) as Record<string, new (data: unknown) => { validate(): void }>)[object.kind];
      assert.ok(Model, `${module} has ${object.kind}`);
      assert.doesNotThrow(() => new Model(object).validate(), `${object.kind} ${object.metadata.name}`);
    }
  });

  it('the validation tells a broken object from a good one', async () => {
    const { Deployment } = await import('kubernetes-models/apps/v1');
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    assert.throws(() => new Deployment(broken as never).validate(), /containerPort must be integer/);
  });

  it('sets only Parley settings, from the Secret, with values the server accepts; the Secret as shipped is refused', () => {
    for (const container of [...pod.spec.initContainers, ...pod.spec.containers] as Container[]) {
      const env = environment(container, filledSecret);
      assert.deepEqual(Object.keys(env).filter((name) => !settingEnvNames.has(name)), [], `${container.name} sets variables that are no Parley setting`);
      assert.doesNotThrow(() => loadConfig(env), container.name);
    }
    assert.deepEqual(Object.keys(secret.stringData!).sort(), Object.keys(filledSecret).sort());
    assert.throws(() => loadConfig(environment(parley, secret.stringData!)), /PARLEY_API_KEY must look like sk_/);
    assert.match(config.databaseUrl, /^postgres:\/\//);
    assert.equal(config.apiKey, filledSecret['api-key']);
  });

  it('an init container pulls catalogue packs into the models volume the server reads', () => {
    const init = (pod.spec.initContainers as Container[]).find((c) => c.command?.includes('models'))!;
    const command = init.command!;
    const at = command.indexOf('parley');
    assert.deepEqual(command.slice(at, at + 3), ['parley', 'models', 'pull']);
    for (const id of command.slice(at + 3)) assert.ok(findCatalogueEntry(id), `${id} is in the catalogue`);
    const initConfig = loadConfig(environment(init, filledSecret));
    const volumeAt = (c: Container, dir: string) => c.volumeMounts!.find((m) => path.resolve(m.mountPath) === dir)?.name;
    assert.equal(initConfig.modelsDir, config.modelsDir);
    assert.equal(volumeAt(init, initConfig.modelsDir), volumeAt(parley, config.modelsDir));
    const models = pod.spec.volumes.find((v: { name: string }) => v.name === volumeAt(parley, config.modelsDir));
    const claim = only('PersistentVolumeClaim');
    assert.equal(models.persistentVolumeClaim.claimName, claim.metadata.name);
    assert.ok(command[0] === 'flock' && path.dirname(command[1]!) === initConfig.modelsDir, 'pods starting together pull one at a time');
    assert.ok(volumeAt(parley, config.dataDir), 'the data dir is a volume (the root file system is read-only)');
  });

  it('ports, Service, ServiceMonitor and NetworkPolicy agree with the server: metrics stay in the cluster', () => {
    assert.equal(containerPort('http'), config.port);
    assert.equal(containerPort('metrics'), config.metrics.port);
    assert.notEqual(config.metrics.host, '127.0.0.1', 'metrics listen on the pod address');
    const labels = pod.metadata.labels;
    assert.ok(matches(deployment.spec.selector.matchLabels, labels));

    const service = only('Service');
    assert.ok(matches(service.spec.selector, labels));
    for (const port of service.spec.ports) assert.ok(parley.ports!.some((p) => p.name === port.targetPort), `Service port ${port.name} targets a container port`);

    const monitor = only('ServiceMonitor');
    assert.ok(matches(monitor.spec.selector.matchLabels, service.metadata.labels));
    for (const endpoint of monitor.spec.endpoints) {
      const servicePort = service.spec.ports.find((p: { name: string }) => p.name === endpoint.port);
      assert.equal(containerPort(servicePort.targetPort), config.metrics.port, 'the ServiceMonitor scrapes the metrics port');
    }

    const policy = only('NetworkPolicy');
    assert.ok(matches(policy.spec.podSelector.matchLabels, labels));
    assert.deepEqual(policy.spec.policyTypes, ['Ingress']);
    const rulesFor = (port: number) => policy.spec.ingress.filter((r: { ports?: Array<{ port: string | number }> }) => !r.ports || r.ports.some((p) => containerPort(p.port) === port));
    const metricsRules = rulesFor(config.metrics.port);
    assert.ok(metricsRules.length > 0, 'the metrics port is reachable at all');
    for (const rule of metricsRules) {
      assert.ok(rule.from?.length > 0, 'the metrics port is not open to every source');
      for (const peer of rule.from) assert.equal(peer.ipBlock, undefined, 'only pods of the cluster, no address ranges');
    }
    assert.ok(rulesFor(config.port).some((r: { from?: unknown[] }) => !r.from), 'the API port is open');
  });

  it('the disruption budget, the autoscaler and the resources fit the Deployment', () => {
    const labels = pod.metadata.labels;
    const budget = only('PodDisruptionBudget');
    assert.ok(matches(budget.spec.selector.matchLabels, labels));
    const autoscaler = only('HorizontalPodAutoscaler');
    assert.deepEqual(autoscaler.spec.scaleTargetRef, { apiVersion: deployment.apiVersion, kind: 'Deployment', name: deployment.metadata.name });
    assert.ok(autoscaler.spec.minReplicas >= 2, 'one pod may stop while another serves');
    assert.ok(autoscaler.spec.minReplicas > (budget.spec.maxUnavailable ?? 0));
    assert.equal(deployment.spec.replicas, undefined, 'the autoscaler owns the replica count');
    assert.ok(parley.resources?.requests?.cpu, 'CPU utilisation needs a CPU request');

    const { requests, limits } = parley.resources!;
    assert.ok(bytes(requests!.memory!) <= bytes(limits!.memory!));
    assert.ok(config.inference.memoryCeilingMb * 1024 ** 2 < bytes(limits!.memory!), 'an inference process is replaced before the pod is killed');
  });

  it('a stopping pod has the time the server\'s shutdown may take after its preStop pause', () => {
    const preStop = parley.lifecycle?.preStop;
    const pause = preStop?.sleep?.seconds ?? (preStop?.exec?.command[0] === 'sleep' ? Number(preStop.exec.command[1]) : 0);
    assert.ok(pause > 0, 'a pause while endpoints stop sending to the pod');
    const needed = pause + (LONGEST_SHUTDOWN_MS + config.database.statementTimeoutMs) / 1000;
    assert.ok(pod.spec.terminationGracePeriodSeconds >= needed, `terminationGracePeriodSeconds ${pod.spec.terminationGracePeriodSeconds} < ${needed}`);
  });

  describe('probes, against a real server started with the pod\'s settings', () => {
    let started: Awaited<ReturnType<typeof startWithEnvironment>>;
    before(async () => {
      started = await startWithEnvironment(environment(parley, filledSecret));
    });
    after(() => started?.server.close());

    it('readiness asks /readyz, liveness and start-up /healthz, on the API port, and each answers 200 on a ready server', async () => {
      const base = new URL(started.server.url);
      assert.equal(parley.readinessProbe!.httpGet.path, '/readyz');
      assert.equal(parley.livenessProbe!.httpGet.path, '/healthz');
      for (const probe of [parley.startupProbe!, parley.readinessProbe!, parley.livenessProbe!]) {
        assert.equal(containerPort(probe.httpGet.port), config.port);
        assert.equal((await fetch(`${base.origin}${probe.httpGet.path}`)).status, 200, probe.httpGet.path);
      }
      const monitor = only('ServiceMonitor');
      for (const endpoint of monitor.spec.endpoints) {
        const response = await fetch(`http://127.0.0.1:${started.metricsPort}${endpoint.path ?? '/metrics'}`);
        assert.equal(response.status, 200);
        assert.match(await response.text(), /^# TYPE parley_http_requests_total counter$/m);
      }
    });
  });
});
