/**
 * The little of the browser's globals the e2e files touch inside `page.evaluate`. The root compile has no
 * DOM library (it would leak browser types into the server's), so callbacks that run in the page say what
 * they use here and read it from `globalThis`, which in the page is the window.
 */
export interface PageElement {
  readonly tagName: string;
  readonly textContent: string | null;
  readonly parentElement: PageElement | null;
  readonly classList: Iterable<string>;
  getBoundingClientRect(): { right: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
}

export interface PageDocument {
  readonly body: PageElement;
  readonly documentElement: { scrollWidth: number };
  readonly activeElement: PageElement | null;
}

export interface PageWindow {
  readonly document: PageDocument;
  readonly innerWidth: number;
  readonly localStorage: { clear(): void };
  readonly axe?: { run: (context: PageDocument, options: object) => Promise<{ violations: unknown[] }> };
}
