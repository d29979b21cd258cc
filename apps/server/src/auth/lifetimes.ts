/**
 * Parses a lifetime such as "1h", "30m", "3600s", "2d" or "3600" (seconds) into seconds, as
 * ClientApplication.accessTokenLifetime and refreshTokenLifetime hold them. Undefined on anything else.
 */
export function parseLifetime(value: string | undefined): number | undefined {
  if (!value) {
    return undefined;
  }
  const m = /^\s*(\d+)\s*(s|m|h|d|w)?\s*$/i.exec(value);
  if (!m) {
    return undefined;
  }
  const n = Number(m[1]);
  const unit = (m[2] ?? 's').toLowerCase();
  const factor = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[unit as 's' | 'm' | 'h' | 'd' | 'w'];
  return n * factor;
}
