// Small helpers for writing generated Markdown pages safely (CommonMark, `markdown.format: 'detect'`).

/** Text safe inside a Markdown table cell: one line, pipes escaped, HTML-ish brackets neutralised. */
export function cell(text: string | undefined): string {
  return unlinkRelative(text ?? '')
    .replace(/\r?\n+/g, ' ')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\s+/g, ' ')
    .trim();
}

/** HL7's descriptions link to pages of the specification relatively: the link text stays. */
export function unlinkRelative(text: string): string {
  return text.replace(/\[([^\]]*)\]\((?!https?:)[^)]*\)/g, '$1');
}

/** The first sentence of a text, on one line. */
export function firstSentence(text: string | undefined): string {
  const flat = unlinkRelative(text ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  const end = flat.search(/\.(\s|$)/);
  return end < 0 ? flat : flat.slice(0, end + 1);
}

/** YAML front matter: values are JSON strings, which YAML reads as they are. */
export function frontMatter(fields: Record<string, string | number | boolean | undefined>): string {
  const lines = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
  return ['---', ...lines, '---', ''].join('\n');
}

export function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
