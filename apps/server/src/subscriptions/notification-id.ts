import { createHash } from 'node:crypto';

/** What names one notification: the subscription, the version it carries, and why it was sent. */
export interface NotificationKey {
  subscriptionId: string;
  resourceType: string;
  id: string;
  /** The version notified (for a deletion: the version deleted). */
  versionId: number | string | undefined;
  interaction: string;
  /** Set by $resend: a resend is a notification of its own. */
  resendId?: string;
}

/**
 * The id of one notification, derived from what it notifies rather than stored, so every process
 * and attempt computes the same one: a SHA-256 name-based UUID (RFC 9562 version 8). Rest-hooks
 * send it as X-Hearth-Delivery-Id, websocket notifications as the Bundle's id.
 */
export function notificationId(key: NotificationKey): string {
  const name = JSON.stringify([
    key.subscriptionId,
    key.resourceType,
    key.id,
    key.versionId === undefined ? null : String(key.versionId),
    key.interaction,
    key.resendId ?? null,
  ]);
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
