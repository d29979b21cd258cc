import { describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createLogger } from '../platform/logger.js';
import type { Repository } from '../storage/repository.js';
import { AuditWriter, type AutomationAudit } from './audit.js';

const audit: AutomationAudit = {
  kind: 'subscription-delivery',
  agent: 'Subscription/s1',
  entities: ['Subscription/s1', 'Patient/p1'],
  success: true,
  description: 'delivered',
  start: new Date(),
  end: new Date(),
};

describe('AuditWriter', () => {
  it('settled() waits for the batch holding what was recorded, without flushing it early', async () => {
    const written: Resource[][] = [];
    let finishWrite = (): void => undefined;
    const repo = {
      createMany: (batch: Resource[]) => {
        written.push(batch);
        return new Promise<void>((r) => (finishWrite = r));
      },
    } as unknown as Repository;
    const writer = new AuditWriter(() => repo, createLogger('silent'));
    await writer.settled(); // nothing recorded: settled at once

    writer.record('p', audit);
    let settled = false;
    void writer.settled().then(() => (settled = true));
    writer.record('p', audit); // joins the same batch
    await new Promise((r) => setTimeout(r, 5));
    expect(written).toHaveLength(0); // still gathering
    await new Promise((r) => setTimeout(r, 40));
    expect(written.map((b) => b.length)).toEqual([2]);
    expect(settled).toBe(false); // written, not yet committed
    finishWrite();
    await new Promise((r) => setTimeout(r, 0));
    expect(settled).toBe(true);
  });
});
