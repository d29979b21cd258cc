// The rule the browser and Redis suites follow: skip with a warning locally, fail under CI.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chromiumForSuite } from './chromium.js';
import { commandRuns, isCi, requiredForSuite } from './required.js';

const MISSING = '/nonexistent/hearth-test/chromium';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('isCi', () => {
  it('reads CI as CI services set it', () => {
    expect(isCi({ CI: 'true' })).toBe(true);
    expect(isCi({ CI: '1' })).toBe(true);
    expect(isCi({ CI: 'TRUE' })).toBe(true);
    expect(isCi({})).toBe(false);
    expect(isCi({ CI: '' })).toBe(false);
    expect(isCi({ CI: 'false' })).toBe(false);
    expect(isCi({ CI: '0' })).toBe(false);
  });
});

describe('requiredForSuite', () => {
  it('runs the suite when the requirement is present, under CI or not, without a word', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(requiredForSuite('thing', true, 'apt-get install -y thing', { CI: 'true' })).toBe(true);
    expect(requiredForSuite('thing', true, 'apt-get install -y thing', {})).toBe(true);
    expect(warn).not.toHaveBeenCalled();
  });

  it('skips with a warning that says what to install when it is missing outside CI', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(requiredForSuite('thing', false, 'apt-get install -y thing', {})).toBe(false);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('apt-get install -y thing'));
  });

  it('fails under CI when it is missing', () => {
    expect(() => requiredForSuite('thing', false, 'apt-get install -y thing', { CI: 'true' })).toThrow(
      /thing is missing, and CI=true: install it \(apt-get install -y thing\)/,
    );
  });
});

describe('chromiumForSuite', () => {
  it('fails under CI and skips elsewhere when there is no browser at the path', () => {
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(() => chromiumForSuite(MISSING, { CI: 'true' })).toThrow(
      /Chromium \(\/nonexistent.*apt-get install -y chromium/,
    );
    expect(chromiumForSuite(MISSING, {})).toBe(false);
  });

  it('runs when the path exists', () => {
    // Any file stands in for the browser: only its presence is checked.
    expect(chromiumForSuite(process.execPath, { CI: 'true' })).toBe(true);
  });
});

describe('commandRuns', () => {
  it('tells an installed command from a missing one', () => {
    expect(commandRuns(process.execPath)).toBe(true);
    expect(commandRuns('hearth-no-such-command')).toBe(false);
  });
});
