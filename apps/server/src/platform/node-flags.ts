/**
 * Node.js flags the server cannot run without, checked before anything else starts.
 *
 * The bot sandbox (isolated-vm) needs `--no-node-snapshot` on Node 20 and newer: V8's shared heap
 * lets isolates share read-only data from their startup snapshot, and an isolated-vm isolate next
 * to Node's own snapshot crashes the process (isolated-vm README; laverdet/isolated-vm#420) -
 * typically at the first bot run, long after start. The flag cannot be set once Node has started,
 * so the server refuses to start without it and says how to start it.
 */

/** The node flags given to this process: on its command line and in NODE_OPTIONS. */
export function givenNodeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): string[] {
  return [...execArgv, ...nodeOptions.split(/\s+/).filter(Boolean)];
}

/** The flag isolated-vm needs (from Node 20 on), as node starts the server with it. */
export const NO_NODE_SNAPSHOT = '--no-node-snapshot';

/** Why the server cannot start with the given flags on this Node.js version, or undefined when it can. */
export function missingNodeFlagProblem(
  flags: readonly string[] = givenNodeFlags(),
  nodeVersion: string = process.versions.node,
): string | undefined {
  const major = Number(nodeVersion.split('.')[0]);
  if (major < 20 || flags.some((flag) => /^--no[-_]node[-_]snapshot$/.test(flag))) {
    return undefined;
  }
  return (
    `Hearth needs Node.js's ${NO_NODE_SNAPSHOT} flag on Node ${nodeVersion}: the bot sandbox (isolated-vm) ` +
    `crashes the process without it. Start the server with \`npm start\`, or ` +
    `\`node ${NO_NODE_SNAPSHOT} apps/server/dist/main.js\`, or set NODE_OPTIONS=${NO_NODE_SNAPSHOT}.`
  );
}

/** Throws (with what to do) when this process lacks a flag the server needs. */
export function assertNodeFlags(flags?: readonly string[], nodeVersion?: string): void {
  const problem = missingNodeFlagProblem(flags, nodeVersion);
  if (problem) {
    throw new Error(problem);
  }
}
