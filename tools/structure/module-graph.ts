// The import graph of a source tree and the checks that keep its layers honest: which module may
// import which, that no module imports a forbidden package, and that nothing imports in a circle.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import of one file: `from` and `to` are paths relative to the tree's root, `/`-separated. */
export interface FileImport {
  from: string;
  /** The imported file (relative imports) or the package name (bare imports). */
  to: string;
  /** True for a package (`fastify`, `@hearth/core`), false for a file of the tree. */
  external: boolean;
  /** As written in the file (`@hearth/core/src/x.js` for a deep import). */
  spec: string;
}

/** The layer rule of a tree: its modules, each with a layer number (0 is the bottom). */
export interface LayerRule {
  /** Module name -> layer. A module may import modules of lower layers, and of its own layer without a cycle. */
  layers: Record<string, number>;
  /** Which module a file (path relative to the root) belongs to; undefined: not checked (test support). */
  moduleOf(file: string): string | undefined;
  /** Package imports (as written) a module may not make: the HTTP framework below the HTTP layer, a deep import. */
  forbiddenPackages?(module: string): RegExp | undefined;
}

export interface Violation {
  kind: 'upward' | 'unplaced' | 'package' | 'module-cycle' | 'file-cycle';
  message: string;
}

const SOURCE = /\.(ts|tsx|mts)$/;

/** Every source file below `root` for which `include` says yes, relative and `/`-separated. */
export function sourceFiles(root: string, include: (file: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        const file = relative(root, path).split(sep).join('/');
        if (include(file)) found.push(file);
      }
    }
  };
  walk(root);
  return found.sort();
}

/**
 * The imports of each file, read by TypeScript's own pre-processor (so comments and strings are no
 * trouble): static imports, `export ... from`, `import type`, and `import()` with a literal.
 */
export function readImports(root: string, files: string[]): FileImport[] {
  const known = new Set(files);
  const imports: FileImport[] = [];
  for (const from of files) {
    const text = readFileSync(join(root, from), 'utf8');
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (fileName.startsWith('.')) {
        const to = resolveRelative(root, from, fileName, known);
        if (to) imports.push({ from, to, external: false, spec: fileName });
      } else if (!fileName.startsWith('node:')) {
        imports.push({ from, to: packageName(fileName), external: true, spec: fileName });
      }
    }
  }
  return imports;
}

/** `./x.js` written for `./x.ts` (ESM style), or a folder's index. */
function resolveRelative(root: string, from: string, spec: string, known: Set<string>): string | undefined {
  const base = relative(root, resolve(root, dirname(from), spec))
    .split(sep)
    .join('/');
  const stem = base.replace(/\.(js|mjs|jsx)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}/index.ts`]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Checks imports against a layer rule; every finding names the files that make it. */
export function checkLayers(imports: FileImport[], rule: LayerRule): Violation[] {
  const violations: Violation[] = [];
  const moduleEdges = new Map<string, Map<string, string>>();
  for (const imp of imports) {
    const fromModule = rule.moduleOf(imp.from);
    if (fromModule === undefined) continue;
    if (!(fromModule in rule.layers)) {
      violations.push({
        kind: 'unplaced',
        message: `${imp.from}: its module "${fromModule}" has no layer; give it one in the layer rule`,
      });
      continue;
    }
    if (imp.external) {
      const forbidden = rule.forbiddenPackages?.(fromModule);
      if (forbidden?.test(imp.spec)) {
        violations.push({
          kind: 'package',
          message: `${imp.from} imports ${imp.spec}, which module "${fromModule}" may not use`,
        });
      }
      continue;
    }
    const toModule = rule.moduleOf(imp.to);
    if (toModule === undefined) {
      violations.push({
        kind: 'upward',
        message: `${imp.from} imports test support ${imp.to}`,
      });
      continue;
    }
    if (toModule === fromModule) continue;
    if (!(toModule in rule.layers)) continue; // reported from its own files
    if (rule.layers[toModule] > rule.layers[fromModule]) {
      violations.push({
        kind: 'upward',
        message: `${imp.from} (${fromModule}, layer ${rule.layers[fromModule]}) imports ${imp.to} (${toModule}, layer ${rule.layers[toModule]}): imports must point down`,
      });
    }
    const edges = moduleEdges.get(fromModule) ?? new Map<string, string>();
    if (!edges.has(toModule)) edges.set(toModule, `${imp.from} -> ${imp.to}`);
    moduleEdges.set(fromModule, edges);
  }
  for (const cycle of cycles(moduleEdges)) {
    violations.push({
      kind: 'module-cycle',
      message: `modules import each other: ${describeCycle(cycle, moduleEdges)}`,
    });
  }
  return violations;
}

/** Files of the tree that import each other, directly or around a circle. */
export function checkFileCycles(imports: FileImport[]): Violation[] {
  const edges = new Map<string, Map<string, string>>();
  for (const imp of imports) {
    if (imp.external || imp.from === imp.to) continue;
    const out = edges.get(imp.from) ?? new Map<string, string>();
    out.set(imp.to, `${imp.from} -> ${imp.to}`);
    edges.set(imp.from, out);
  }
  return cycles(edges).map((cycle) => ({
    kind: 'file-cycle' as const,
    message: `files import each other: ${cycle.join(', ')}`,
  }));
}

/** Strongly connected components of more than one node (Tarjan), each sorted. */
function cycles(edges: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node)?.keys() ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...edges.keys()].sort()) {
    if (!index.has(node)) visit(node);
  }
  return found;
}

/** The members of a cycle with, for each arrow inside it, the first import that draws it. */
function describeCycle(members: string[], edges: Map<string, Map<string, string>>): string {
  const inside = new Set(members);
  const arrows: string[] = [];
  for (const from of members) {
    for (const [to, example] of edges.get(from) ?? []) {
      if (inside.has(to)) arrows.push(`${from} -> ${to} (${example})`);
    }
  }
  return `${members.join(', ')}; ${arrows.join('; ')}`;
}
