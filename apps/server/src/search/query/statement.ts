/**
 * Fragments are compiled against one growing list of bound values; each statement takes only
 * the values it uses, renumbered in order ($7 $3 $7 -> $1 $2 $1), because PostgreSQL refuses a
 * parameter it cannot type, and a statement must not carry another's.
 */
export function finalize(sql: string, values: unknown[]): { text: string; values: unknown[] } {
  const mapping = new Map<number, number>();
  const out: unknown[] = [];
  const text = sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const index = Number(n);
    let mapped = mapping.get(index);
    if (mapped === undefined) {
      out.push(values[index - 1]);
      mapped = out.length;
      mapping.set(index, mapped);
    }
    return `$${mapped}`;
  });
  return { text, values: out };
}
