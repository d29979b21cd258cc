import { describe, expect, it } from 'vitest';
import type { OperationOutcome } from '@hearth/core';
import { operationDefinition } from './definitions/build.js';
import { standardDefinition } from './definitions/standard.js';
import { OperationRegistry, operationEntry } from './registry.js';

const handler = async () => ({});

function definition(
  levels: { system?: boolean; type?: boolean; instance?: boolean },
  resource?: string[],
  affectsState?: boolean,
) {
  return operationDefinition({
    id: 'Thing-op',
    url: 'https://example.org/OperationDefinition/Thing-op',
    name: 'ThingOp',
    title: 'An operation for the test',
    code: 'op',
    description: 'Does a thing.',
    levels,
    resource,
    affectsState,
    parameter: [],
  });
}

function outcomeOf(fn: () => unknown): { status: number; text?: string } {
  try {
    fn();
  } catch (err) {
    const outcome = (err as { outcome?: OperationOutcome }).outcome;
    return { status: (err as { status?: number }).status ?? 0, text: outcome?.issue[0]?.details?.text };
  }
  throw new Error('expected a failure');
}

describe('operationEntry', () => {
  it('derives the name, levels and types from the definition; Resource means any type', () => {
    const entry = operationEntry({ definition: standardDefinition('ValueSet-expand'), handler });
    expect(entry).toMatchObject({ name: 'expand', levels: ['type', 'instance'], resourceTypes: ['ValueSet'] });
    const any = operationEntry({ definition: standardDefinition('Resource-graphql'), handler });
    expect(any.levels).toEqual(['system', 'instance']);
    expect(any.resourceTypes).toBeUndefined();
  });

  it('allows GET unless the operation affects state (POST only)', () => {
    expect(operationEntry({ definition: definition({ type: true }, ['Thing']), handler }).methods).toEqual([
      'GET',
      'POST',
    ]);
    expect(operationEntry({ definition: definition({ type: true }, ['Thing'], true), handler }).methods).toEqual([
      'POST',
    ]);
  });

  it('takes an explicit override of levels or methods', () => {
    const entry = operationEntry({
      definition: definition({ instance: true }, ['Thing'], true),
      override: { levels: ['type', 'instance'], methods: ['GET', 'POST'] },
      handler,
    });
    expect(entry.levels).toEqual(['type', 'instance']);
    expect(entry.methods).toEqual(['GET', 'POST']);
  });
});

describe('OperationRegistry.resolve', () => {
  const registry = new OperationRegistry();
  registry.register({ definition: definition({ type: true, instance: true }, ['Thing'], true), handler });
  registry.register({ definition: standardDefinition('Resource-validate'), handler });

  it('finds the entry for the level, type and method', () => {
    expect(registry.resolve('op', 'instance', 'POST', 'Thing').name).toBe('op');
    expect(registry.resolve('validate', 'type', 'GET', 'Patient').name).toBe('validate');
  });

  it('answers 404 for an operation not defined there, naming where', () => {
    expect(outcomeOf(() => registry.resolve('op', 'type', 'POST', 'Patient'))).toEqual({
      status: 404,
      text: 'Operation $op is not supported on Patient',
    });
    expect(outcomeOf(() => registry.resolve('op', 'system', 'POST')).status).toBe(404);
    expect(outcomeOf(() => registry.resolve('nothing', 'instance', 'GET', 'Thing')).text).toBe(
      'Operation $nothing is not supported on Thing instances',
    );
  });

  it('answers 405 for GET on an operation that changes state', () => {
    expect(outcomeOf(() => registry.resolve('op', 'type', 'GET', 'Thing'))).toEqual({
      status: 405,
      text: 'Operation $op does not accept GET',
    });
  });
});
