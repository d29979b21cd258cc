import { describe, expect, it } from 'vitest';
import { deliveryId } from './deliver.js';
import type { DeliveryJob } from './evaluate.js';

const job: DeliveryJob = {
  projectId: '9f1c5e0a-0000-4000-8000-000000000001',
  resourceType: 'Observation',
  id: 'obs-1',
  versionId: 3,
  previousVersionId: 2,
  interaction: 'update',
  subscriptionId: 'sub-1',
};

describe('deliveryId', () => {
  it('is a version 8 UUID, the same whenever the same notification is sent', () => {
    const id = deliveryId(job);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // What only one attempt carries (the content, its attempt number) does not change it.
    expect(deliveryId({ ...job, content: '{"resourceType":"Observation"}', firstAttempt: 2 })).toBe(id);
  });

  it('differs by subscription, resource, version, interaction and resend', () => {
    const id = deliveryId(job);
    const others = [
      { ...job, subscriptionId: 'sub-2' },
      { ...job, id: 'obs-2' },
      { ...job, resourceType: 'Condition' },
      { ...job, versionId: 4 },
      { ...job, interaction: 'create' as const },
      { ...job, resendId: 'a' },
    ].map(deliveryId);
    expect(new Set([id, ...others]).size).toBe(others.length + 1);
    expect(deliveryId({ ...job, resendId: 'b' })).not.toBe(deliveryId({ ...job, resendId: 'a' }));
  });

  it('names a deletion by the version it deleted', () => {
    const deletion = { ...job, interaction: 'delete' as const, versionId: 4, previousVersionId: 3 };
    expect(deliveryId({ ...deletion, versionId: 5 })).toBe(deliveryId(deletion));
    expect(deliveryId({ ...deletion, previousVersionId: 2 })).not.toBe(deliveryId(deletion));
  });
});
