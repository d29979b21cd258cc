import { describe, expect, it } from 'vitest';
import { LayeredGuard } from './guard.js';
import { RoleLayer } from './role-layer.js';
import { RuleLayer } from './rule-layer.js';

const OWN = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const options = { projectId: OWN, superAdmin: false, restricted: false };
const writes = new Set(['create', 'update', 'delete', 'read'] as const);

describe('writeCheckNeeded: when a written row must be read back against the write condition', () => {
  it('not for a super admin, nor for a member writing to its own project', () => {
    expect(
      new LayeredGuard([new RoleLayer('super')], { ...options, superAdmin: true }).writeCheckNeeded('Patient', OTHER),
    ).toBe(false);
    const member = new LayeredGuard([new RoleLayer('member', { own: OWN })], options);
    expect(member.writeCheckNeeded('Patient', OWN)).toBe(false);
  });

  it('for a row in another project than the one writes are pinned to', () => {
    const member = new LayeredGuard([new RoleLayer('member', { own: OWN })], options);
    expect(member.writeCheckNeeded('Patient', OTHER)).toBe(true);
  });

  it('not for a policy that grants writes of the type without criteria', () => {
    const policy = new RuleLayer([{ resourceType: 'Patient', interactions: new Set(writes) }]);
    const guard = new LayeredGuard([new RoleLayer('member', { own: OWN }), policy], options);
    expect(guard.writeCheckNeeded('Patient', OWN)).toBe(false);
  });

  it('for a policy whose write rules look at the row (criteria, compartments)', () => {
    const policy = new RuleLayer([
      { resourceType: 'Patient', interactions: new Set(writes), condition: (a) => `${a}.compartments && '{}'` },
    ]);
    const guard = new LayeredGuard([new RoleLayer('member', { own: OWN }), policy], options);
    expect(guard.writeCheckNeeded('Patient', OWN)).toBe(true);
  });

  it('for a type the layer does not let be written at all', () => {
    const readOnly = new RuleLayer([{ resourceType: 'Patient', interactions: new Set(['read'] as const) }]);
    const guard = new LayeredGuard([new RoleLayer('member', { own: OWN }), readOnly], options);
    expect(guard.writeCheckNeeded('Patient', OWN)).toBe(true);
    // Project configuration is admin-only to write: a member's role layer grants no write of it.
    expect(new LayeredGuard([new RoleLayer('member', { own: OWN })], options).writeCheckNeeded('Bot', OWN)).toBe(true);
  });

  it('a wildcard rule without criteria opens writes of every type; one with criteria does not', () => {
    const open = new RuleLayer([{ resourceType: '*', interactions: new Set(writes) }]);
    expect(new LayeredGuard([open], options).writeCheckNeeded('Observation', OWN)).toBe(false);
    const narrowed = new RuleLayer([
      { resourceType: '*', interactions: new Set(writes), condition: (a) => `${a}.id <> ''` },
    ]);
    expect(new LayeredGuard([narrowed], options).writeCheckNeeded('Observation', OWN)).toBe(true);
  });
});
