/** The server's version, reported by /healthcheck and the CapabilityStatement. */
export const HEARTH_VERSION = '0.1.0';
