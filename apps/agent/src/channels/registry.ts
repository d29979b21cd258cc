// Channel factories by the scheme of their Endpoint's address (mllp://, astm://, dicom://).
import type { ChannelFactory } from './types.js';
import { createMllpChannel } from './mllp/channel.js';
import { createAstmChannel } from './astm/index.js';
import { createDicomChannel } from './dicom/index.js';

/** The one registry of channel kinds: HL7 v2 over MLLP, ASTM E1381/E1394 over TCP, DICOM storage. */
export const CHANNEL_FACTORIES: Readonly<Record<string, ChannelFactory>> = {
  mllp: createMllpChannel,
  astm: createAstmChannel,
  dicom: createDicomChannel,
};

/** The factory for an address, by its scheme (`mllp:` → mllp). */
export function channelFactoryFor(address: URL): ChannelFactory {
  const scheme = address.protocol.replace(/:$/, '');
  const factory = CHANNEL_FACTORIES[scheme];
  if (!factory) {
    throw new Error(`No channel for ${scheme}:// addresses (known: ${Object.keys(CHANNEL_FACTORIES).join(', ')})`);
  }
  return factory;
}
