/**
 * A line diff (longest common subsequence) of two texts, used to compare resource versions as
 * pretty-printed, key-sorted JSON.
 */
export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  // Trim the common head and tail first: versions usually differ in a few lines.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const n = midA.length;
  const m = midB.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = midA[i] === midB[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ kind: 'same', text }));
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && midA[i] === midB[j]) {
      out.push({ kind: 'same', text: midA[i] });
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out.push({ kind: 'added', text: midB[j++] });
    } else {
      out.push({ kind: 'removed', text: midA[i++] });
    }
  }
  out.push(...a.slice(a.length - tail).map((text): DiffLine => ({ kind: 'same', text })));
  return out;
}

/** Pretty JSON with keys sorted, ignoring meta (which changes on every version). */
export function versionText(resource: object): string {
  const { meta: _meta, ...rest } = resource as Record<string, unknown>;
  return JSON.stringify(sortKeys(rest), null, 2);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort((x, y) =>
      x === 'resourceType' ? -1 : y === 'resourceType' ? 1 : x.localeCompare(y),
    )) {
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}

export interface BlameLine {
  text: string;
  /** Index (into the oldest-first list of versions) of the version that last changed the line. */
  version: number;
}

/**
 * For each line of the newest version, the version that introduced it: walks the versions
 * oldest first and carries each unchanged line's origin forward through the diffs.
 */
export function blame(texts: string[]): BlameLine[] {
  let current: BlameLine[] = [];
  texts.forEach((text, version) => {
    const lines = diffLines(current.map((l) => l.text).join('\n'), text);
    const next: BlameLine[] = [];
    let k = 0;
    for (const line of lines) {
      if (line.kind === 'same') {
        next.push({ text: line.text, version: current[k]?.version ?? version });
        k++;
      } else if (line.kind === 'added') {
        next.push({ text: line.text, version });
      } else {
        k++;
      }
    }
    current = version === 0 ? text.split('\n').map((t) => ({ text: t, version: 0 })) : next;
  });
  return current;
}
