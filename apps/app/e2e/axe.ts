/** axe-core (deque's accessibility engine) run inside a page: the violations that matter. */
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type { PageElement, PageWindow } from './browser-globals.js';

const require = createRequire(import.meta.url);
const AXE_SOURCE = require.resolve('axe-core/axe.min.js');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** The serious and critical violations axe finds on the page as it is drawn now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) {
    await page.addScriptTag({ path: AXE_SOURCE });
  }
  const violations = await page.evaluate(async () => {
    const window = globalThis as unknown as PageWindow;
    const result = (await window.axe!.run(window.document, { resultTypes: ['violations'] })) as {
      violations: AxeViolation[];
    };
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A readable list of violations, for a failing assertion's message. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `  at ${n.target.join(' ')}`).join('\n')}`)
    .join('\n');
}

/** Whether the page scrolls sideways (content wider than the window), and what reaches past its edge. */
export async function overflowsHorizontally(
  page: Page,
): Promise<{ scrollWidth: number; innerWidth: number; widest: string[] } | undefined> {
  const sizes = await page.evaluate(() => {
    const window = globalThis as unknown as PageWindow;
    const document = window.document;
    const past = (e: PageElement | null) => !!e && e.getBoundingClientRect().right > window.innerWidth + 1;
    // The outermost elements reaching past the window's right edge, to say what to fix.
    const widest: string[] = [];
    for (const element of document.body.querySelectorAll('*')) {
      if (past(element) && !past(element.parentElement)) {
        const text = (element.textContent ?? '').slice(0, 40);
        widest.push(`${element.tagName.toLowerCase()}.${[...element.classList].join('.')} "${text}"`);
      }
    }
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      widest: widest.slice(0, 5),
    };
  });
  return sizes.scrollWidth > sizes.innerWidth + 1 ? sizes : undefined;
}
