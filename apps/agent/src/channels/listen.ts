// Binding a channel's TCP listener to its Endpoint address, the same way for every protocol.
import type { Server } from 'node:net';
import type { ChannelContext } from './types.js';

/**
 * Listens on the channel's address (`scheme://host:port`; `[::]` style IPv6 hosts unwrapped, no
 * host meaning every interface) and resolves once bound; rejects when the port is taken.
 */
export async function listenOn(server: Server, context: ChannelContext, kind: string): Promise<void> {
  const { hostname, port } = context.address;
  if (!port) {
    throw new Error(`${kind} channel ${context.name}: the address ${context.address.href} names no port`);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), hostname.replace(/^\[|\]$/g, '') || '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
