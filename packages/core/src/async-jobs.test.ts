import { describe, expect, it } from 'vitest';
import { ASYNC_JOB_PROGRESS_EXTENSION, asyncJobProgress } from './async-jobs.js';

describe('asyncJobProgress', () => {
  it('reads the fraction, message and counts a running job reports', () => {
    const job = {
      extension: [
        { url: 'http://other', valueString: 'x' },
        {
          url: ASYNC_JOB_PROGRESS_EXTENSION,
          extension: [
            { url: 'fraction', valueDecimal: 0.3 },
            { url: 'message', valueString: '3/10 resources (Patient)' },
            { url: 'done', valueInteger: 3 },
            { url: 'total', valueInteger: 10 },
          ],
        },
      ],
    };
    expect(asyncJobProgress(job)).toEqual({ fraction: 0.3, message: '3/10 resources (Patient)', done: 3, total: 10 });
  });

  it('derives the fraction from counts, keeps it within 0..1, and is undefined without the extension', () => {
    const counts = (done: number, total: number) => ({
      extension: [
        {
          url: ASYNC_JOB_PROGRESS_EXTENSION,
          extension: [
            { url: 'done', valueInteger: done },
            { url: 'total', valueInteger: total },
          ],
        },
      ],
    });
    expect(asyncJobProgress(counts(1, 4))?.fraction).toBe(0.25);
    expect(asyncJobProgress(counts(9, 4))?.fraction).toBe(1);
    expect(asyncJobProgress(counts(0, 0))?.fraction).toBe(0);
    expect(asyncJobProgress({})).toBeUndefined();
    expect(asyncJobProgress(undefined)).toBeUndefined();
  });
});
