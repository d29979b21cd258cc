import { BlockList, isIP } from 'node:net';
import { fail, forbiddenWith } from '@hearth/core';
import type { AuthState } from '../session.js';

/** An allow/block rule for client addresses (AccessPolicy.ipAccessRule). */
export interface IpRule {
  name?: string;
  value: string;
  action: 'allow' | 'block';
}

/**
 * The project's rules (Project.setting `ipAccessRule`, valueString "allow 10.0.0.0/8" or
 * "block 203.0.113.7") come first, then those of the membership's access policies, in order.
 */
export function ipRulesOf(state: Pick<AuthState, 'project' | 'grants'>): IpRule[] {
  const rules: IpRule[] = [];
  for (const setting of state.project.setting ?? []) {
    if (setting.name === 'ipAccessRule' && setting.valueString) {
      const [action, value] = setting.valueString.trim().split(/\s+/);
      if ((action === 'allow' || action === 'block') && value) {
        rules.push({ action, value, name: 'project' });
      }
    }
  }
  for (const { policy } of state.grants) {
    rules.push(...(policy.ipAccessRule ?? []));
  }
  return rules;
}

function matches(rule: IpRule, address: string): boolean {
  const value = rule.value.trim();
  if (value === '*') {
    return true;
  }
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  try {
    const [net, bits] = value.split('/');
    const netFamily = isIP(net) === 6 ? 'ipv6' : 'ipv4';
    if (bits !== undefined) {
      list.addSubnet(net, Number(bits), netFamily);
    } else {
      list.addAddress(net, netFamily);
    }
    const plain = address.replace(/^::ffff:/, '');
    return list.check(address, family) || (plain !== address && list.check(plain, 'ipv4'));
  } catch {
    return false;
  }
}

/** The first rule that matches the address decides; no match allows (hl7 AccessPolicy.ipAccessRule). */
export function assertIpAllowed(rules: IpRule[], address: string): void {
  for (const rule of rules) {
    if (matches(rule, address)) {
      if (rule.action === 'block') {
        fail(forbiddenWith(`Access from ${address} is blocked${rule.name ? ` (${rule.name})` : ''}`));
      }
      return;
    }
  }
}
