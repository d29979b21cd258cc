// Types of release.mjs (a plain Node.js module, so that `npm run release` needs no build step).

export interface LockEntry {
  version?: string;
  resolved?: string;
  link?: boolean;
  optional?: boolean;
  dev?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface Lockfile {
  packages: Record<string, LockEntry>;
}

export interface ReleaseResult {
  tarball: string;
  folder: string;
  version: string;
  bytes: number;
  unpackedBytes: number;
  packages: number;
  ms: number;
}

export const ROOT: string;
export const START_SCRIPT: string;
export const SERVER_MAIN: string;
export const NODE_FLAGS: string[];
export const UNIT_FILE: string;
export const ENV_EXAMPLE: string;
export const INSTALL_LINK: string;
export const ENV_FILE: string;
export const STATE_DIR: string;

export function releaseNames(version: string, platform?: string, arch?: string): { folder: string; tarball: string };
export function resolveDependency(packages: Record<string, LockEntry>, from: string, name: string): string | undefined;
export function runtimeClosure(
  lock: Lockfile,
  workspace: string,
  installed: (location: string) => boolean,
): { locations: string[]; skipped: string[] };
export function copyPackage(src: string, dst: string, links?: Map<string, string>): void;
export function startScript(options: { version: string; nodeMajor: string; nodeAbi: string }): string;
export function systemdUnit(): string;
export function exampleEnv(): string;
export function folderBytes(dir: string): number;
export function nativeAddons(dir: string): string[];
export function buildRelease(options?: { outDir?: string; log?: (line: string) => void }): Promise<ReleaseResult>;
