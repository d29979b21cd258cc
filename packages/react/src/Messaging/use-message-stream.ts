import { SubscriptionManager, type Communication, type HearthClient } from '@hearth/core';
import { useEffect, useRef } from 'react';
import { useHearth } from '../provider/HearthProvider.js';

/** One websocket per client, shared by every screen that listens (the manager counts subscribers per criteria). */
const managers = new WeakMap<HearthClient, SubscriptionManager>();

function managerOf(client: HearthClient): SubscriptionManager {
  let manager = managers.get(client);
  if (!manager) {
    manager = new SubscriptionManager(client);
    managers.set(client, manager);
  }
  return manager;
}

/** The criteria of the messages addressed to `me`. */
export function inboxCriteria(me: string): string {
  return `Communication?recipient=${me}`;
}

/**
 * Calls `onMessage` with every message sent to `me` ("Patient/1") or changed (a receipt) from now
 * on, live over a websocket subscription (`Communication?recipient=me`); without `me`, nothing.
 */
export function useMessageStream(me: string | undefined, onMessage: (message: Communication) => void): void {
  const client = useHearth();
  const callback = useRef(onMessage);
  callback.current = onMessage;
  useEffect(() => {
    if (!me || typeof WebSocket === 'undefined') {
      return undefined;
    }
    const criteria = inboxCriteria(me);
    const manager = managerOf(client);
    const emitter = manager.subscribe<Communication>(criteria);
    const listener = (event: { resource?: Communication; deleted: boolean }): void => {
      if (event.resource && !event.deleted) {
        callback.current(event.resource);
      }
    };
    emitter.on('message', listener);
    return () => {
      emitter.off('message', listener);
      void manager.unsubscribe(criteria).catch(() => undefined);
    };
  }, [client, me]);
}
